# syntax=docker/dockerfile:1
# One image for every process: core-api (any PTS_ROLES), the worker, the local anvil chain and the chat bots
# (`npm run bot:discord`, `npm run bot:telegram`).
# linux/amd64 only: the lockfile pins @foundry-rs/anvil-linux-amd64.
FROM node:20-bookworm-slim

ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false

WORKDIR /app

# Manifests first so the dependency layer is cached until they change.
COPY package.json package-lock.json ./
COPY shared/package.json shared/package.json
COPY sdk/package.json sdk/package.json
COPY core-api/package.json core-api/package.json
COPY bots/package.json bots/package.json
COPY portal/package.json portal/package.json
# Dev dependencies are kept (--include=dev) until the runtime import graph is verified free of them;
# optional ones must stay: the anvil binary ships in @foundry-rs/anvil-linux-amd64.
RUN npm ci --include=dev --include=optional \
 && npm cache clean --force \
 && ln -s "$(ls -d /app/node_modules/@foundry-rs/anvil-linux-*/bin/anvil | head -n 1)" /usr/local/bin/anvil \
 && anvil --version

COPY . .
# The brand portal's pages, built at image build time (the app's user cannot write /app at run time).
RUN node --import tsx portal/build.ts

# Persistent state (PGlite when no DATABASE_URL, generated keys, anvil state) lives in /data.
RUN mkdir -p /data && chown node:node /data
USER node
ENV HOST=0.0.0.0 \
    PORT=3000 \
    PTS_DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 3000

HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/livez').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"

CMD ["npm", "start"]
