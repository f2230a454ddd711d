# syntax=docker/dockerfile:1
# Volley web: the Next.js UI, the REST API /api/v1, the live feed and the agents' relay to the hub (/hub).
# Stateless; run any number of replicas. Build from the repository root:
#   docker build -f infra/docker/web.Dockerfile -t volley/web .
# The final image is Next's standalone output (only the traced server files and packages) plus
# apps/web/server.ts bundled into one file, the agent installer and the agent package web serves.
ARG NODE_IMAGE=node:22-bookworm-slim
# The final stage's base: NODE_IMAGE unless given (infra/images/build-base.sh makes a slimmer one without npm).
ARG NODE_RUNTIME_IMAGE=${NODE_IMAGE}

# Only the manifests: `npm ci` below stays cached until a package.json or the lockfile changes.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY . .
RUN find . -type f ! -name package.json ! -name package-lock.json -delete

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY --from=manifests /src ./
# Every workspace, dev dependencies included: the build stage compiles; none of it reaches the final stage.
RUN npm ci --no-audit --no-fund

FROM deps AS build
ENV NEXT_TELEMETRY_DISABLED=1 \
    VOLLEY_NEXT_STANDALONE=1
COPY . .
# The build reads no environment but VOLLEY_NEXT_STANDALONE (apps/web/src/env.ts reads it per request).
RUN cd apps/web \
 && node /app/node_modules/next/dist/bin/next build \
 && npm run bundle \
 && cd /app && npm run pack -w @volley/agent
RUN mkdir /out \
 && cp -a apps/web/.next/standalone/. /out/ \
 && rm -rf /out/apps/web/src /out/apps/web/dist /out/apps/web/server.ts /out/apps/web/server.js /out/apps/web/next.config.ts /out/apps/web/tsconfig.json /out/apps/web/vitest.config.ts \
 && cp -a apps/web/.next/static /out/apps/web/.next/static \
 && cp apps/web/dist/server.mjs /out/apps/web/server.mjs \
 && mkdir -p /out/infra/agent /out/apps/agent/dist \
 && cp infra/agent/install.sh /out/infra/agent/ \
 && cp apps/agent/dist/volley-agent.tgz apps/agent/dist/volley-agent.tgz.sha256 /out/apps/agent/dist/

FROM ${NODE_RUNTIME_IMAGE} AS runtime
ENV NODE_ENV=production \
    NEXT_TELEMETRY_DISABLED=1 \
    WEB_HOST=0.0.0.0 \
    WEB_PORT=3000
WORKDIR /app
# Owned by node: Next writes its cache under .next at run time.
COPY --from=build --chown=node:node /out ./
WORKDIR /app/apps/web
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.WEB_PORT}/api/v1/openapi.json`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The custom server (apps/web/server.ts, bundled): Next's handler, the Socket.IO live feed (/live)
# and the hub relay (/hub) on one port, WEB_HOST:WEB_PORT.
CMD ["node", "server.mjs"]
