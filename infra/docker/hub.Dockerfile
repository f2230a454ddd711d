# syntax=docker/dockerfile:1
# Volley hub: run orchestration, shard dispatch, metric aggregation and the agents' gateway (/agent).
# Build from the repository root (the npm workspaces need the whole monorepo):
#   docker build -f infra/docker/hub.Dockerfile -t volley/hub .
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

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HUB_HOST=0.0.0.0 \
    HUB_PORT=3001
WORKDIR /app
COPY --from=deps /app ./
COPY . .
WORKDIR /app/apps/hub
USER node
EXPOSE 3001
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.HUB_PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Migrates the database on start (under an advisory lock, so replicas may start together).
CMD ["node", "--import", "tsx", "src/main.ts"]
