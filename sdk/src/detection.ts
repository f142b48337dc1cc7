import { isEmailAddress } from '../../shared/src/schemas/email.ts';
import type { PtsEventConfig } from '../sdk.d.ts';
import type { JsonStore } from './storage.ts';
import { matchesAnyUrlPattern } from './url-match.ts';

export interface Detected {
  rule: PtsEventConfig;
  /** What makes this occurrence distinct within the tab session (the page for url_pattern). */
  occurrence: string;
  /** An email the page gave (the submitted form's), if any. */
  email?: string;
}

export interface DetectionOptions {
  rules: PtsEventConfig[];
  /** How long after a form submit a success selector may appear. */
  formTimeoutMs: number;
  sessionStore: JsonStore;
  storagePrefix: string;
  /** Pages visited (SPA navigations included) before the configuration arrived. */
  visited: string[];
  onDetected(detected: Detected): void;
}

/** A submit still waiting for its success selector when the page went away (a classic, navigating form). */
interface PendingForm {
  until: number;
  email?: string;
  /** The rules that applied on the form's page (the next page's URL need not match their patterns). */
  eventTypes: string[];
}

/**
 * Wires the automatic detection methods (spec 2.3):
 * - `url_pattern`: the page (and each SPA navigation) matches one of `urlPatterns`;
 * - `form_auto`: a form is submitted and one of `successSelectors` then becomes visible within the timeout
 *   (on an AJAX form's page, or on the page a classic form navigates to); a form whose page shows no success
 *   element never rewards. `urlPatterns`, when given, limit the pages it applies on;
 * - `sdk_auto`: no code on the brand's side: once per session when the page matches `urlPatterns` (when
 *   given) and shows one of `successSelectors` (when given) — with neither, the first page view.
 * Returns a function called on each navigation.
 */
export function startDetection(options: DetectionOptions): (href: string) => void {
  const { rules, sessionStore: store } = options;
  const formKey = `${options.storagePrefix}form`;
  const byMethod = (method: PtsEventConfig['detectionMethod']) =>
    rules.filter((rule) => rule.detectionMethod === method);
  const urlRules = byMethod('url_pattern');
  const formRules = byMethod('form_auto');
  const autoRules = byMethod('sdk_auto');
  const appliesHere = (rule: PtsEventConfig) =>
    !rule.detectionConfig.urlPatterns?.length || matchesAnyUrlPattern(location.href, rule.detectionConfig.urlPatterns);

  const onNavigate = (href: string) => {
    for (const rule of urlRules) {
      if (matchesAnyUrlPattern(href, rule.detectionConfig.urlPatterns)) {
        options.onDetected({ rule, occurrence: pageOf(href) });
      }
    }
    checkAuto();
  };

  // sdk_auto: checked on each navigation and, for rules with selectors, on DOM changes, until it fires.
  const fired = new Set<PtsEventConfig>();
  const checkAuto = () => {
    for (const rule of autoRules) {
      if (fired.has(rule) || !appliesHere(rule)) continue;
      const selectors = rule.detectionConfig.successSelectors ?? [];
      if (selectors.length === 0 || selectors.some((selector) => visibleMatches(selector).length > 0)) {
        fired.add(rule);
        options.onDetected({ rule, occurrence: 'auto' });
      }
    }
  };
  if (autoRules.some((rule) => rule.detectionConfig.successSelectors?.length)) {
    observe(() => checkAuto());
  }

  // form_auto
  let watching: { stop(): void } | undefined;
  const watchForSuccess = (
    candidates: PtsEventConfig[],
    email: string | undefined,
    until: number,
    before: Set<Element>,
  ) => {
    watching?.stop();
    if (candidates.length === 0) return;
    const eventTypes = candidates.map((rule) => rule.eventType);
    store.write(formKey, { until, eventTypes, ...(email ? { email } : {}) } satisfies PendingForm);
    const check = () => {
      const succeeded = candidates.filter((rule) =>
        (rule.detectionConfig.successSelectors ?? []).some((selector) =>
          visibleMatches(selector).some((element) => !before.has(element)),
        ),
      );
      if (succeeded.length === 0) return;
      stop();
      for (const rule of succeeded) {
        options.onDetected({ rule, occurrence: 'form', ...(email ? { email } : {}) });
      }
    };
    const disconnect = observe(check);
    const timer = setTimeout(() => stop(), Math.max(0, until - Date.now()));
    const stop = () => {
      disconnect();
      clearTimeout(timer);
      store.remove(formKey);
      watching = undefined;
    };
    watching = { stop };
    check();
  };
  if (formRules.length > 0) {
    document.addEventListener(
      'submit',
      (event) => {
        try {
          const form = event.target instanceof HTMLFormElement ? event.target : undefined;
          if (!form) return;
          const before = new Set<Element>();
          for (const rule of formRules) {
            for (const selector of rule.detectionConfig.successSelectors ?? []) {
              for (const element of visibleMatches(selector)) before.add(element);
            }
          }
          watchForSuccess(formRules.filter(appliesHere), emailIn(form), Date.now() + options.formTimeoutMs, before);
        } catch {
          // never break the host page's form
        }
      },
      true,
    );
    // A classic form navigated here: its success element may be on this page.
    const pendingForm = store.read<PendingForm | undefined>(formKey, undefined);
    if (pendingForm && pendingForm.until > Date.now() && Array.isArray(pendingForm.eventTypes)) {
      const carried = formRules.filter((rule) => pendingForm.eventTypes.includes(rule.eventType));
      watchForSuccess(carried, pendingForm.email, pendingForm.until, new Set());
    } else store.remove(formKey);
    // An AJAX form's watch that ends with its page must not carry over to an unrelated reload.
    addEventListener('pagehide', () => {
      if (!watching) store.remove(formKey);
    });
  }

  for (const href of options.visited) onNavigate(href);
  return onNavigate;
}

/** The page a URL names, without its fragment: a reload of it is the same occurrence. */
export function pageOf(href: string): string {
  const url = new URL(href);
  return url.origin + url.pathname + url.search;
}

function visibleMatches(selector: string): Element[] {
  try {
    return [...document.querySelectorAll(selector)].filter(
      (element) =>
        (element as HTMLElement).getClientRects().length > 0 && getComputedStyle(element).visibility !== 'hidden',
    );
  } catch {
    return []; // an invalid selector in the rule
  }
}

/** Runs `check` (at most once per frame) while the DOM changes; returns the function that stops it. */
function observe(check: () => void): () => void {
  let scheduled = false;
  const observer = new MutationObserver(() => {
    if (scheduled) return;
    scheduled = true;
    setTimeout(() => {
      scheduled = false;
      try {
        check();
      } catch {
        // a failing check must not stop the next one
      }
    }, 16);
  });
  observer.observe(document.documentElement, {
    childList: true,
    subtree: true,
    attributes: true,
    attributeFilter: ['class', 'style', 'hidden', 'open'],
  });
  return () => observer.disconnect();
}

/** The email a form carries: its `type=email` field, else a field named like `email`. */
function emailIn(form: HTMLFormElement): string | undefined {
  const fields = [
    ...form.querySelectorAll<HTMLInputElement>('input[type=email], input[name*=email i], input[id*=email i]'),
  ];
  return fields.map((field) => field.value.trim()).find(isEmailAddress);
}
