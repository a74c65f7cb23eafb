import { embeddedS3Target, s3Store } from "../support/s3-stores.ts";
import { objectStoreContract } from "./object-store.contract.ts";

objectStoreContract("embedded S3 endpoint (S3 adapter over Miniflare R2)", () => s3Store(embeddedS3Target()));
