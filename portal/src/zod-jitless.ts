import { config } from 'zod';

// zod 4 probes `new Function('')` when it builds its first object schema, to compile fast parsers. The
// portal's CSP allows no eval, so the probe is refused and Chromium reports a `securitypolicyviolation` on every
// page even though zod catches it. `jitless` skips the probe; it must run before any schema is built, so this
// module imports nothing but zod, is main.tsx's first import, and the build puts it in zod's own chunk after
// zod's code (vite.config.ts): a chunk the entry imports runs before the entry's own code.
config({ jitless: true });
