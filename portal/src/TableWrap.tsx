import type { ReactNode } from 'react';

/**
 * A table that scrolls sideways on a narrow screen (375 px). The scrolling region takes keyboard focus, so a
 * keyboard user can scroll it too (WCAG 2.1.1; axe's scrollable-region-focusable), and is named for screen readers.
 */
export function TableWrap({ label, children }: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard to be scrolled without a mouse
    <section className="table-wrap" tabIndex={0} aria-label={label}>
      {children}
    </section>
  );
}
