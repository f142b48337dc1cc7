import { describeError } from './describe.ts';

/**
 * A failure shown where it happened, as a person reads it (nothing when there is no error). With `onRetry` (a
 * list or page whose read failed) it offers "Try again", which asks once more without reloading the page.
 */
export function ErrorNote({ error, className, onRetry }: { error: unknown; className?: string; onRetry?: () => void }) {
  if (error === null || error === undefined) return null;
  const text = describeError(error).message;
  if (!onRetry) {
    return (
      <p role="alert" {...(className ? { className } : {})}>
        {text}
      </p>
    );
  }
  return (
    <div className="row">
      <p role="alert" {...(className ? { className } : {})}>
        {text}
      </p>
      <button type="button" className="secondary" onClick={onRetry}>
        Try again
      </button>
    </div>
  );
}
