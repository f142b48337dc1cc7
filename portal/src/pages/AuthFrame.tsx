import { type ReactNode, useEffect } from 'react';
import { PORTAL_NAME } from '../page-title.ts';

export function AuthFrame({ title, children }: { title: string; children: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · ${PORTAL_NAME}`;
  }, [title]);
  return (
    <main id="main" className="auth">
      <p className="logo">pts portal</p>
      <h1>{title}</h1>
      {children}
    </main>
  );
}
