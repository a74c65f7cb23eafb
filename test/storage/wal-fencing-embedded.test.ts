import { embeddedS3Target, s3Store } from "../support/s3-stores.ts";
import { walFencingSuite } from "../support/wal-fencing-suite.ts";

walFencingSuite("the embedded S3 endpoint", () => s3Store(embeddedS3Target()));
