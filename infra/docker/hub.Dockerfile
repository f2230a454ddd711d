# syntax=docker/dockerfile:1
# Volley hub: run orchestration, shard dispatch, metric aggregation and the agents' gateway (/agent).
# Build from the repository root (the npm workspaces need the whole monorepo):
#   docker build -f infra/docker/hub.Dockerfile -t volley/hub .
# The final image is Node.js and one bundled file (apps/hub/src/build/bundle-hub.ts) with the
# migrations it applies at start: no TypeScript, no node_modules.
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
COPY . .
RUN npm run build -w @volley/hub

FROM ${NODE_RUNTIME_IMAGE} AS runtime
ENV NODE_ENV=production \
    HUB_HOST=0.0.0.0 \
    HUB_PORT=3001
WORKDIR /app
COPY --from=build /app/apps/hub/dist ./
USER node
EXPOSE 3001
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.HUB_PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Migrates the database on start (under an advisory lock, so replicas may start together).
CMD ["node", "bin/hub.mjs"]
