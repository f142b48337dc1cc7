import { type ReactNode, useEffect, useRef } from 'react';

/**
 * A table that scrolls sideways when the screen is too narrow for it (375 px). While it scrolls, the region
 * takes keyboard focus so a keyboard user can scroll it too (WCAG 2.1.1; axe's scrollable-region-focusable);
 * when the table fits it is no tab stop. Named for screen readers.
 */
export function TableWrap({ label, children, wide = false }: { label: string; children: ReactNode; wide?: boolean }) {
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    const region = ref.current;
    if (!region) return;
    const update = () => {
      if (region.scrollWidth > region.clientWidth) region.tabIndex = 0;
      else region.removeAttribute('tabindex');
    };
    update();
    const observer = new ResizeObserver(update);
    observer.observe(region);
    if (region.firstElementChild) observer.observe(region.firstElementChild);
    return () => observer.disconnect();
  }, []);
  return (
    <section ref={ref} className={wide ? 'table-wrap wide' : 'table-wrap'} aria-label={label}>
      {children}
    </section>
  );
}
