import { randomBytes, timingSafeEqual } from 'node:crypto';
import { ADDRESS_PATTERN, AppError, type PortalRole } from '@pts/shared';
import type { Request, RequestHandler, Response } from 'express';
import type { PortalAuthService, PortalUser } from './portal-auth.service.ts';

export const SESSION_COOKIE = 'pts_portal_session';
export const CSRF_COOKIE = 'pts_portal_csrf';
export const CSRF_HEADER = 'x-csrf-token';
const COOKIE_PATH = '/portal';

export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return decodeURIComponent(part.slice(index + 1).trim());
  }
  return undefined;
}

/** HttpOnly, SameSite=Lax, scoped to /portal; Secure when the request came over https (directly or via a proxy). */
export function setCookie(req: Request, res: Response, name: string, value: string, maxAgeSeconds?: number): void {
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${COOKIE_PATH}`, 'HttpOnly', 'SameSite=Lax'];
  if (maxAgeSeconds !== undefined) parts.push(`Max-Age=${maxAgeSeconds}`);
  if (req.secure) parts.push('Secure');
  res.append('Set-Cookie', parts.join('; '));
}

export function clearCookie(req: Request, res: Response, name: string): void {
  setCookie(req, res, name, '', 0);
}

/** The CSRF token of this browser: the cookie's, or a new one (set as a cookie) when it has none. */
export function csrfTokenFor(req: Request, res: Response): string {
  const existing = readCookie(req, CSRF_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomBytes(32).toString('base64url');
  setCookie(req, res, CSRF_COOKIE, token);
  return token;
}

/**
 * Every state-changing portal request carries X-CSRF-Token equal to the CSRF cookie (double submit). Another
 * site can make a browser send the cookie, but can neither read the token (the session answer is same-origin
 * JSON) nor send a custom header without a CORS preflight the portal never grants.
 */
export const requireCsrf: RequestHandler = (req, _res, next) => {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return next();
  const cookie = readCookie(req, CSRF_COOKIE) ?? '';
  const header = req.get(CSRF_HEADER) ?? '';
  const a = Buffer.from(cookie);
  const b = Buffer.from(header);
  if (!cookie || a.length !== b.length || !timingSafeEqual(a, b)) {
    return next(
      new AppError(
        'FORBIDDEN',
        'Missing or wrong CSRF token: send X-CSRF-Token with the csrfToken of GET /portal/api/session',
      ),
    );
  }
  next();
};

/** Loads the session's user into `res.locals.portalUser`, or answers 401. */
export function requireSession(auth: Pick<PortalAuthService, 'userOfSession'>): RequestHandler {
  return async (req, res, next) => {
    try {
      const token = readCookie(req, SESSION_COOKIE);
      const user = token ? await auth.userOfSession(token) : undefined;
      if (!user)
        throw new AppError('UNAUTHORIZED', 'Sign in to the portal first (the session is missing or has ended)');
      res.locals.portalUser = user;
      next();
    } catch (error) {
      next(error);
    }
  };
}

/**
 * Before the body is read: the signed-in user's role in the path's brand must reach `needed`, so a viewer's
 * change is answered 403 whatever its body holds, never a 400 that reads it first (issue 33 §14). A path
 * whose brand id is malformed is left to the validation (400); the handler keeps its own check.
 */
export function requireBrandRole(
  team: { requireRole(userId: string, brandId: string, needed: PortalRole): Promise<unknown> },
  needed: PortalRole,
): RequestHandler {
  return async (req, res, next) => {
    try {
      const brandId = String(req.params.brandId ?? '');
      if (ADDRESS_PATTERN.test(brandId)) await team.requireRole(portalUserOf(res).id, brandId.toLowerCase(), needed);
      next();
    } catch (error) {
      next(error);
    }
  };
}

export function portalUserOf(res: Response): PortalUser {
  const user = res.locals.portalUser as PortalUser | undefined;
  if (!user) throw new AppError('UNAUTHORIZED', 'Sign in to the portal first');
  return user;
}
