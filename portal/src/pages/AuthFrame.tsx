import type { ReactNode } from 'react';

export function AuthFrame({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main id="main" className="auth">
      <p className="logo">pts portal</p>
      <h1>{title}</h1>
      {children}
    </main>
  );
}
