import { describeError } from './describe.ts';

/** A failure shown where it happened, as a person reads it (nothing when there is no error). */
export function ErrorNote({ error, className }: { error: unknown; className?: string }) {
  if (error === null || error === undefined) return null;
  return (
    <p role="alert" {...(className ? { className } : {})}>
      {describeError(error).message}
    </p>
  );
}
