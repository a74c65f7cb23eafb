// MetaLog: the metadata log Durable Object (issue 3 builds it out). A thin shell over src/core/meta.
import { DurableObject } from "cloudflare:workers";

export class MetaLog extends DurableObject {}
