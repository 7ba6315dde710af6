/**
 * Bookkeeping that must not delay an answer: recording a call in the activity log, telling
 * metrics and streams that a driver answered. Queued work runs once the current round of I/O
 * callbacks and their promise reactions are done (Node's check phase), so the reply that the
 * same round produced is already written to its socket. Everything queued in one round shares
 * one `setImmediate`, and tasks run in the order queued.
 *
 * A task handles its own failures (the registry's observers and the event bus's listeners
 * already do); one that throws anyway is reported as a process warning rather than crash the hub
 * from a callback nobody awaits, and the tasks after it still run.
 */
type Task = () => void;

let queued: Task[] = [];
let scheduled = false;

function runQueued(): void {
  scheduled = false;
  const tasks = queued;
  queued = [];
  for (const task of tasks) {
    try {
      task();
    } catch (err) {
      process.emitWarning(err instanceof Error ? err : new Error(String(err)), 'AfterAnswerTaskFailed');
    }
  }
}

/** Runs `task` after the answers of this I/O round are sent (see the module comment). */
export function afterAnswer(task: Task): void {
  queued.push(task);
  if (scheduled) return;
  scheduled = true;
  setImmediate(runQueued);
}
