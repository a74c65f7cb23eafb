import { requireExternalS3Target, s3Store } from "../support/s3-stores.ts";
import { walFencingSuite } from "../support/wal-fencing-suite.ts";

const target = requireExternalS3Target();
walFencingSuite(`the external S3 server at ${target.endpoint}`, () => s3Store(target));
