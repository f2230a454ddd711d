# syntax=docker/dockerfile:1
# Volley web: the Next.js UI and the REST API /api/v1. Stateless; run any number of replicas.
# Build from the repository root (the npm workspaces need the whole monorepo):
#   docker build -f infra/docker/web.Dockerfile -t volley/web .
ARG NODE_IMAGE=node:22-bookworm-slim

# Only the manifests: `npm ci` below stays cached until a package.json or the lockfile changes.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY . .
RUN find . -type f ! -name package.json ! -name package-lock.json -delete

FROM ${NODE_IMAGE} AS deps
# Toolchain for native addons that have no prebuilt binary for this platform; never reaches the final image.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=manifests /src ./
# Every workspace at once, dev dependencies included: the apps run their TypeScript through tsx
# (a root devDependency), exactly as `npm start` does.
RUN npm ci --no-audit --no-fund

FROM deps AS build
ENV NEXT_TELEMETRY_DISABLED=1
COPY . .
# The build reads no environment (apps/web/src/env.ts reads it per request).
RUN cd apps/web && node /app/node_modules/next/dist/bin/next build

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    NEXT_TELEMETRY_DISABLED=1 \
    WEB_HOST=0.0.0.0 \
    WEB_PORT=3000
WORKDIR /app
COPY --from=build /app ./
# Next writes its cache under .next at run time.
RUN chown -R node:node /app/apps/web/.next
WORKDIR /app/apps/web
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.WEB_PORT}/api/v1/openapi.json`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The custom server (apps/web/server.ts): Next's handler and the Socket.IO live feed (/live) on
# one port, WEB_HOST:WEB_PORT. Plain Next without the live feed (pages poll) would be
#   CMD ["sh", "-c", "exec node /app/node_modules/next/dist/bin/next start -H \"$WEB_HOST\" -p \"$WEB_PORT\""]
CMD ["node", "--import", "tsx", "server.ts"]
