# syntax=docker/dockerfile:1
# Volley demo targets: WebSocket, Socket.IO, SockJS, STOMP, HTTP (single and node:cluster) and
# SocketCluster reference servers for the templates, demos and smoke tests.
# Build from the repository root (the npm workspaces need the whole monorepo):
#   docker build -f infra/docker/targets.Dockerfile -t volley/targets .
ARG NODE_IMAGE=node:22-bookworm-slim

# Only the manifests: `npm ci` below stays cached until a package.json or the lockfile changes.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY . .
RUN find . -type f ! -name package.json ! -name package-lock.json -delete

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY --from=manifests /src ./
# Every workspace at once, dev dependencies included: the demo targets (not a deployable of
# Volley's own) run their TypeScript through tsx, as `npm start` does, node:cluster workers included.
RUN npm ci --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    TARGETS_HOST=0.0.0.0 \
    WS_ECHO_PORT=9001 \
    SOCKETIO_ECHO_PORT=9002 \
    SOCKJS_ECHO_PORT=9003 \
    STOMP_ECHO_PORT=9004 \
    HTTP_ECHO_PORT=9005 \
    SOCKETCLUSTER_ECHO_PORT=9006 \
    HTTP_CLUSTER_PORT=9007 \
    MQTT_BROKER_PORT=9017
WORKDIR /app
COPY --from=deps /app ./
COPY . .
WORKDIR /app/apps/targets
USER node
EXPOSE 9001 9002 9003 9004 9005 9006 9007 9017
# A Socket.IO polling handshake: answered only once the echo servers listen.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.SOCKETIO_ECHO_PORT}/socket.io/?EIO=4&transport=polling`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--import", "tsx", "src/main.ts"]
