import { Agent as HttpAgent } from 'node:http';
import { TwitterApi, type TwitterApiReadOnly } from 'twitter-api-v2';

const X_ORIGIN = 'https://api.x.com';

/**
 * An app-only (bearer token) X client for `apiRoot`. twitter-api-v2 always builds `https://api.x.com/…`
 * URLs and always calls `https.request`: a plugin rewrites each URL onto `apiRoot` before it is sent, and
 * a plain-http root gets an `http.Agent` (https.request accepts it for an `http:` URL).
 */
export function createXClient(options: { bearerToken: string; apiRoot: string }): TwitterApiReadOnly {
  const root = options.apiRoot.replace(/\/+$/, '');
  const rewrites = root !== X_ORIGIN;
  const plain = root.startsWith('http://');
  const client = new TwitterApi(options.bearerToken, {
    ...(plain ? { httpAgent: new HttpAgent({ keepAlive: true }) } : {}),
    plugins: rewrites
      ? [
          {
            onBeforeRequestConfig({ params }) {
              const url = params.url.startsWith('http') ? params.url : `https://${params.url}`;
              for (const origin of [X_ORIGIN, 'https://api.twitter.com']) {
                if (url.startsWith(origin)) params.url = root + url.slice(origin.length);
              }
            },
          },
        ]
      : [],
  });
  return client.readOnly;
}
