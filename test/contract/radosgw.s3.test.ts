import { requireExternalS3Target, s3Store } from "../support/s3-stores.ts";
import { objectStoreContract } from "./object-store.contract.ts";

const target = requireExternalS3Target();
objectStoreContract(`external S3 server at ${target.endpoint} (radosgw in CI)`, () => s3Store(target));
