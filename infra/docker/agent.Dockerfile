# syntax=docker/dockerfile:1
# Volley agent: the load generator. Connects out to the hub (HUB_URL) with AGENT_TOKEN; needs no inbound port.
# Build from the repository root (the npm workspaces need the whole monorepo):
#   docker build -f infra/docker/agent.Dockerfile -t volley/agent .
# The final image holds Node.js and the agent package web serves to installers (apps/agent/src/pack:
# one bundled file plus its third-party dependencies), installed as the installer installs it.
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
RUN npm run pack -w @volley/agent \
 && npm install --global --prefix /opt/volley-agent --no-audit --no-fund --loglevel=error apps/agent/dist/volley-agent.tgz

FROM ${NODE_RUNTIME_IMAGE} AS runtime
ENV NODE_ENV=production
COPY --from=build /opt/volley-agent /opt/volley-agent
USER node
WORKDIR /home/node
# No HEALTHCHECK: the agent serves nothing; it exits when it cannot work and the orchestrator
# restarts it. Raise the open-files limit where it runs (compose: ulimits; Kubernetes: the node).
CMD ["node", "/opt/volley-agent/bin/volley-agent", "daemon"]
