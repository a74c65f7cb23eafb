// StreamNode: one owning node (issue 4 builds it out). A thin shell over src/core and src/storage.
import { DurableObject } from "cloudflare:workers";

export class StreamNode extends DurableObject {}
