// The one ok/error union of mink: a decision's value, or the typed rejection that says why not (a domain
// error by default, with what the caller needs to recover in its details). Every checker and rule that can
// refuse returns one; names such as `Parsed`, `Checked` and `TableResult` are this type under the name
// their readers know it by. Command results of the metadata log add `changed` (meta/commands.ts).
import type { DomainError } from "./errors.ts";

export type Result<T, E = DomainError> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: E };
