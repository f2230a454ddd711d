# syntax=docker/dockerfile:1
# Volley agent: the load generator. Connects out to the hub (HUB_URL) with AGENT_TOKEN; needs no inbound port.
# Build from the repository root (the npm workspaces need the whole monorepo):
#   docker build -f infra/docker/agent.Dockerfile -t volley/agent .
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
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app ./
COPY . .
WORKDIR /app/apps/agent
USER node
# No HEALTHCHECK: the agent serves nothing; it exits when it cannot work and the orchestrator
# restarts it. Raise the open-files limit where it runs (compose: ulimits; Kubernetes: the node).
CMD ["node", "--import", "tsx", "src/main.ts", "daemon"]
