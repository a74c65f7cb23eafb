// The one alarm of the MetaLog, kept at the earliest subscription lease deadline: set again only when a
// deadline comes before the one already set, forgotten when it fires or could not be set. A lapsed lease is
// also settled by the next step that touches its record; the alarm only adds retries.
import { workerLog } from "../../log/logger.ts";

export class DeadlineAlarm {
  /** The alarm this incarnation set (null: none known). */
  private atMs: number | null = null;

  constructor(private readonly setAlarm: (atMs: number) => Promise<void>) {}

  /** A deadline the subscription book now holds (null: none). */
  schedule(deadlineMs: number | null): void {
    if (deadlineMs === null) return;
    if (this.atMs !== null && this.atMs <= deadlineMs) return;
    this.atMs = deadlineMs;
    this.setAlarm(deadlineMs).catch((error: unknown) => {
      this.atMs = null;
      workerLog.log("meta_log.error", { during: "set_alarm" }, error);
    });
  }

  /** The alarm went off: the next deadline sets it again. */
  fired(): void {
    this.atMs = null;
  }
}
