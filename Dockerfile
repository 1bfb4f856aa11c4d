# syntax=docker/dockerfile:1
# orgsync container: build with dev dependencies, run on node:22-slim with production dependencies only.
#   docker build -t orgsync .
#   docker run --rm -v orgsync-state:/var/lib/orgsync -v $PWD/orgsync.yaml:/etc/orgsync/orgsync.yaml:ro \
#     orgsync sync --config /etc/orgsync/orgsync.yaml

FROM node:22-slim AS build
WORKDIR /app
# Toolchain only for the rare case where better-sqlite3 has no prebuilt binary for this platform.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY packages/emulator/package.json ./packages/emulator/package.json
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY packages/emulator/tsconfig.json packages/emulator/tsconfig.build.json ./packages/emulator/
COPY packages/emulator/src ./packages/emulator/src
COPY src ./src
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:22-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
# A fixed uid/gid, so Kubernetes' runAsNonRoot can verify it and volumes can be owned by it (fsGroup 10001).
RUN groupadd --system --gid 10001 orgsync \
 && useradd --system --uid 10001 --gid orgsync --home-dir /var/lib/orgsync --no-create-home --shell /usr/sbin/nologin orgsync \
 && mkdir -p /var/lib/orgsync /etc/orgsync \
 && chown orgsync:orgsync /var/lib/orgsync
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/packages/emulator/package.json ./packages/emulator/package.json
COPY --from=build /app/packages/emulator/dist ./packages/emulator/dist
# config/ carries the example config and the demo (`docker run --rm orgsync demo`).
COPY config ./config
USER 10001:10001
# The state DB (mirror, ownership, run history, lease); point state.path at /var/lib/orgsync/orgsync.db.
VOLUME ["/var/lib/orgsync"]
# /metrics /healthz /readyz /status of `orgsync daemon` (metrics.listen).
EXPOSE 9464
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["--help"]
