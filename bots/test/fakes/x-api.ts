import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A local X API v2 (the subset the X bot uses), speaking the wire format twitter-api-v2 parses: users by
// username, a user's mentions timeline and recent search (newest first, since_id, max_results, pagination
// tokens, includes.users), `x-rate-limit-*` headers per endpoint, 401 without the bearer token, 429 when an
// endpoint's window is spent. Posts are whatever the test adds.

export interface FakeXUser {
  id: string;
  username: string;
  name: string;
}

export interface FakeXPost {
  id: string;
  authorId: string;
  text: string;
  createdAt: string;
  conversationId?: string;
  inReplyToUserId?: string;
  /** `replied_to` / `quoted` / `retweeted` references. */
  referencedTweets?: { type: 'replied_to' | 'quoted' | 'retweeted'; id: string }[];
  /** Links in the post (expanded), e.g. the quoted post's URL. */
  urls?: string[];
}

export interface FakeXRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  status: number;
}

type Endpoint = 'users' | 'mentions' | 'search' | 'timeline' | 'likes' | 'reposts';

export interface FakeXApi {
  url: string;
  requests: FakeXRequest[];
  addUser(user: FakeXUser): void;
  addPost(post: FakeXPost): void;
  deletePosts(): void;
  /** A user liked / reposted a post (read by the pro tier's liking_users and retweeted_by). */
  addLike(postId: string, userId: string): void;
  addRepost(postId: string, userId: string): void;
  /** Requests allowed per window for an endpoint (default 450) and when the window resets (unix seconds). */
  setRateLimit(endpoint: Endpoint, limit: number, resetAt: number): void;
  /** The next request to the endpoint answers this status (e.g. 503). */
  failNext(endpoint: Endpoint, status: number): void;
  close(): Promise<void>;
}

const HASHTAG = /(?:^|\s)#(\w+)/g;
const MENTION = /(?:^|[^\w])@(\w{1,15})/g;
const MAX_QUERY_LENGTH = 512;

export async function startFakeXApi(options: { bearerToken: string }): Promise<FakeXApi> {
  const users = new Map<string, FakeXUser>();
  const posts = new Map<string, FakeXPost>();
  const requests: FakeXRequest[] = [];
  const limits = new Map<Endpoint, { limit: number; remaining: number; reset: number }>();
  const failures = new Map<Endpoint, number>();
  const likes = new Map<string, string[]>();
  const reposts = new Map<string, string[]>();
  const windowOf = (endpoint: Endpoint) => {
    let window = limits.get(endpoint);
    if (!window) {
      window = { limit: 450, remaining: 450, reset: Math.floor(Date.now() / 1000) + 900 };
      limits.set(endpoint, window);
    }
    return window;
  };

  const byNewest = (a: FakeXPost, b: FakeXPost) =>
    BigInt(b.id) > BigInt(a.id) ? 1 : BigInt(b.id) < BigInt(a.id) ? -1 : 0;
  const userByName = (name: string) => [...users.values()].find((u) => u.username.toLowerCase() === name.toLowerCase());
  const hashtagsOf = (post: FakeXPost) => [...post.text.matchAll(HASHTAG)].map((m) => m[1]!.toLowerCase());
  const mentionsOf = (post: FakeXPost) => [...post.text.matchAll(MENTION)].map((m) => m[1]!.toLowerCase());

  function toWire(post: FakeXPost, fields: Set<string>) {
    const author = users.get(post.authorId);
    const hashtags = [...post.text.matchAll(HASHTAG)].map((m) => ({
      start: m.index ?? 0,
      end: (m.index ?? 0) + m[0].length,
      tag: m[1]!,
    }));
    const mentions = [...post.text.matchAll(MENTION)].map((m) => ({
      start: m.index ?? 0,
      end: (m.index ?? 0) + m[0].length,
      username: m[1]!,
      id: userByName(m[1]!)?.id,
    }));
    const wire: Record<string, unknown> = { id: post.id, text: post.text, edit_history_tweet_ids: [post.id] };
    if (fields.has('author_id')) wire.author_id = post.authorId;
    if (fields.has('created_at')) wire.created_at = post.createdAt;
    if (fields.has('conversation_id')) wire.conversation_id = post.conversationId ?? post.id;
    if (fields.has('in_reply_to_user_id') && post.inReplyToUserId) wire.in_reply_to_user_id = post.inReplyToUserId;
    if (fields.has('referenced_tweets') && post.referencedTweets) wire.referenced_tweets = post.referencedTweets;
    if (fields.has('entities')) {
      wire.entities = {
        ...(hashtags.length ? { hashtags } : {}),
        ...(mentions.length ? { mentions } : {}),
        ...(post.urls?.length
          ? {
              urls: post.urls.map((u) => ({
                start: 0,
                end: 23,
                url: 'https://t.co/x',
                expanded_url: u,
                display_url: u,
              })),
            }
          : {}),
      };
    }
    void author;
    return wire;
  }

  /** A page of posts: newest first, after since_id, max_results per page, next_token the next offset. */
  function page(matching: FakeXPost[], query: Record<string, string>, min: number, res: ServerResponse) {
    const max = query.max_results === undefined ? 10 : Number(query.max_results);
    if (!Number.isInteger(max) || max < min || max > 100) {
      return sendError(
        res,
        400,
        `The \`max_results\` query parameter value [${query.max_results}] is not between ${min} and 100`,
      );
    }
    let list = matching.sort(byNewest);
    if (query.since_id) list = list.filter((p) => BigInt(p.id) > BigInt(query.since_id!));
    const token = query.pagination_token ?? query.next_token;
    const offset = token ? Number(Buffer.from(token, 'base64url').toString()) : 0;
    const slice = list.slice(offset, offset + max);
    const fields = new Set((query['tweet.fields'] ?? '').split(',').filter(Boolean));
    const expansions = new Set((query.expansions ?? '').split(',').filter(Boolean));
    const body: Record<string, unknown> = {
      meta: {
        result_count: slice.length,
        ...(slice.length ? { newest_id: slice[0]!.id, oldest_id: slice.at(-1)!.id } : {}),
        ...(offset + max < list.length ? { next_token: Buffer.from(String(offset + max)).toString('base64url') } : {}),
      },
    };
    if (slice.length) body.data = slice.map((p) => toWire(p, fields));
    if (slice.length && expansions.has('author_id')) {
      const authors = [...new Set(slice.map((p) => p.authorId))].map((id) => users.get(id)).filter(Boolean);
      body.includes = { users: authors };
    }
    sendJson(res, 200, body);
  }

  /**
   * The recent-search query language, as far as the bot uses it: one parenthesised OR group of
   * `url:"…"` and `#tag` terms, then `-from:name` and `-is:retweet`. Anything else is a 400, as X refuses
   * what it cannot parse.
   */
  function parseQuery(query: string): ((post: FakeXPost) => boolean) | string {
    if (query.length > MAX_QUERY_LENGTH) return `query is ${query.length} characters; at most ${MAX_QUERY_LENGTH}`;
    const group = /^\((.+)\)((?:\s+-[a-z]+:[^\s]+)*)$/.exec(query.trim());
    if (!group) return `There were errors processing your request: cannot parse query ${query}`;
    const terms = group[1]!.split(/\s+OR\s+/);
    const matchers: ((post: FakeXPost) => boolean)[] = [];
    for (const term of terms) {
      const url = /^url:"([^"]+)"$/.exec(term);
      const tag = /^#(\w+)$/.exec(term);
      if (url) {
        const needle = url[1]!.toLowerCase();
        matchers.push((post) => (post.urls ?? []).some((u) => u.toLowerCase().includes(needle)));
      } else if (tag) {
        const wanted = tag[1]!.toLowerCase();
        matchers.push((post) => hashtagsOf(post).includes(wanted));
      } else return `There were errors processing your request: unknown term ${term}`;
    }
    const negations = group[2]!.trim().split(/\s+/).filter(Boolean);
    const excluded: ((post: FakeXPost) => boolean)[] = [];
    for (const negation of negations) {
      const from = /^-from:(\w{1,15})$/.exec(negation);
      if (from) {
        const name = from[1]!.toLowerCase();
        excluded.push((post) => users.get(post.authorId)?.username.toLowerCase() === name);
      } else if (negation === '-is:retweet') {
        excluded.push((post) => (post.referencedTweets ?? []).some((r) => r.type === 'retweeted'));
      } else return `There were errors processing your request: unknown operator ${negation}`;
    }
    return (post) => matchers.some((m) => m(post)) && !excluded.some((e) => e(post));
  }

  function handle(req: IncomingMessage, res: ServerResponse, url: URL, record: (status: number) => void) {
    const query = Object.fromEntries(url.searchParams);
    const path = url.pathname;
    const endpoint: Endpoint | undefined = path.startsWith('/2/users/by/username/')
      ? 'users'
      : /^\/2\/users\/\d+\/mentions$/.test(path)
        ? 'mentions'
        : path === '/2/tweets/search/recent'
          ? 'search'
          : /^\/2\/users\/\d+\/tweets$/.test(path)
            ? 'timeline'
            : /^\/2\/tweets\/\d+\/liking_users$/.test(path)
              ? 'likes'
              : /^\/2\/tweets\/\d+\/retweeted_by$/.test(path)
                ? 'reposts'
                : undefined;
    if (!endpoint || req.method !== 'GET') return sendError(res, 404, `no route ${req.method} ${path}`, record);
    if (req.headers.authorization !== `Bearer ${options.bearerToken}`) {
      return sendError(res, 401, 'Unauthorized', record, { title: 'Unauthorized', type: 'about:blank' });
    }
    const window = windowOf(endpoint);
    const now = Math.floor(Date.now() / 1000);
    if (window.reset <= now) {
      window.remaining = window.limit;
      window.reset = now + 900;
    }
    res.setHeader('x-rate-limit-limit', String(window.limit));
    res.setHeader('x-rate-limit-reset', String(window.reset));
    if (window.remaining <= 0) {
      res.setHeader('x-rate-limit-remaining', '0');
      return sendError(res, 429, 'Too Many Requests', record, { title: 'Too Many Requests', type: 'about:blank' });
    }
    window.remaining -= 1;
    res.setHeader('x-rate-limit-remaining', String(window.remaining));
    const failure = failures.get(endpoint);
    if (failure) {
      failures.delete(endpoint);
      return sendError(res, failure, 'Service Unavailable', record);
    }
    record(200);
    if (endpoint === 'users') {
      const user = userByName(decodeURIComponent(path.split('/').at(-1)!));
      if (!user) {
        return sendJson(res, 200, {
          errors: [
            {
              title: 'Not Found Error',
              detail: 'Could not find user',
              type: 'https://api.twitter.com/2/problems/resource-not-found',
            },
          ],
        });
      }
      return sendJson(res, 200, { data: user });
    }
    if (endpoint === 'mentions') {
      const user = users.get(path.split('/')[3]!);
      if (!user) return sendJson(res, 200, { meta: { result_count: 0 } });
      const mine = user.username.toLowerCase();
      return page(
        [...posts.values()].filter((p) => mentionsOf(p).includes(mine)),
        query,
        5,
        res,
      );
    }
    if (endpoint === 'timeline') {
      const authorId = path.split('/')[3]!;
      const excluded = new Set((query.exclude ?? '').split(',').filter(Boolean));
      const own = [...posts.values()].filter(
        (p) =>
          p.authorId === authorId &&
          !(excluded.has('replies') && p.inReplyToUserId) &&
          !(excluded.has('retweets') && (p.referencedTweets ?? []).some((r) => r.type === 'retweeted')),
      );
      return page(own, query, 5, res);
    }
    if (endpoint === 'likes' || endpoint === 'reposts') {
      const ids = (endpoint === 'likes' ? likes : reposts).get(path.split('/')[3]!) ?? [];
      const list = ids.map((id) => users.get(id)).filter(Boolean);
      return sendJson(
        res,
        200,
        list.length ? { data: list, meta: { result_count: list.length } } : { meta: { result_count: 0 } },
      );
    }
    const matcher = parseQuery(query.query ?? '');
    if (typeof matcher === 'string') {
      requests.at(-1)!.status = 400;
      return sendError(res, 400, matcher);
    }
    return page([...posts.values()].filter(matcher), query, 10, res);
  }

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake-x');
    const entry: FakeXRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      status: 0,
    };
    requests.push(entry);
    handle(req, res, url, (status) => {
      entry.status = status;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    addUser: (user) => users.set(user.id, user),
    addPost: (post) => posts.set(post.id, post),
    deletePosts: () => posts.clear(),
    addLike: (postId, userId) => likes.set(postId, [...(likes.get(postId) ?? []), userId]),
    addRepost: (postId, userId) => reposts.set(postId, [...(reposts.get(postId) ?? []), userId]),
    setRateLimit(endpoint, limit, resetAt) {
      limits.set(endpoint, { limit, remaining: limit, reset: resetAt });
    },
    failNext(endpoint, status) {
      failures.set(endpoint, status);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

function sendError(
  res: ServerResponse,
  status: number,
  detail: string,
  record?: (status: number) => void,
  extra: Record<string, unknown> = {},
) {
  record?.(status);
  sendJson(res, status, { title: extra.title ?? 'Invalid Request', detail, type: extra.type ?? 'about:blank', status });
}
