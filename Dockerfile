# syntax=docker/dockerfile:1
# orgsync container. Two targets, both on node:24-slim with production dependencies only:
#   docker build -t orgsync .                            # default (the last stage, runtime): the sync alone
#   docker run --rm -v orgsync-state:/var/lib/orgsync -v $PWD/orgsync.yaml:/etc/orgsync/orgsync.yaml:ro \
#     orgsync sync --config /etc/orgsync/orgsync.yaml
#   docker build --target demo -t orgsync:demo .         # the sync plus the emulator package (packages/emulator)
#   docker run --rm orgsync:demo demo                    # orgsync demo; or: emulator --port 8080 --seed ... --host 0.0.0.0
# The default target carries neither the emulator nor its dependencies (fastify, ajv, jose, pdf-lib, unpdf):
# `orgsync emulator` and `orgsync demo` there exit 1 with one line saying the package is not installed.

# Toolchain only for the rare case where better-sqlite3 has no prebuilt binary for this platform.
FROM node:24-slim AS toolchain
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*

# Builds the emulator package (a project reference) and the sync, with dev dependencies.
FROM toolchain AS build
COPY package.json package-lock.json ./
COPY packages/emulator/package.json ./packages/emulator/package.json
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY packages/emulator/tsconfig.json packages/emulator/tsconfig.build.json ./packages/emulator/
COPY packages/emulator/src ./packages/emulator/src
COPY src ./src
COPY tools/bundle.mjs ./tools/bundle.mjs
RUN npm run build

# The sync's production dependencies alone: the workspace (the emulator) is left out.
FROM toolchain AS prod-deps
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --workspaces=false --no-audit --no-fund

# The sync's and the emulator's production dependencies (node_modules/@orgsync/emulator links to packages/emulator).
FROM toolchain AS demo-deps
COPY package.json package-lock.json ./
COPY packages/emulator/package.json ./packages/emulator/package.json
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-slim AS base
ENV NODE_ENV=production
# V8's young generation at 8 MiB (two semi-spaces of 4). Node sizes it from the memory it sees: 32 MiB without a
# limit, kept for the whole run; 2 MiB at 512Mi, where short-lived objects fill the old generation. The initial sync
# of 100,000 members peaked 18 MB lower at 4, in the same time (docs/operations.md). The chart sets NODE_OPTIONS
# itself (nodeSemiSpaceMiB, with the heap limit).
ENV NODE_OPTIONS=--max-semi-space-size=4
WORKDIR /app
# A fixed uid/gid, so Kubernetes' runAsNonRoot can verify it and volumes can be owned by it (fsGroup 10001).
RUN groupadd --system --gid 10001 orgsync \
 && useradd --system --uid 10001 --gid orgsync --home-dir /var/lib/orgsync --no-create-home --shell /usr/sbin/nologin orgsync \
 && mkdir -p /var/lib/orgsync /etc/orgsync \
 && chown orgsync:orgsync /var/lib/orgsync

# docker build --target demo: the sync plus the emulator, for `docker run … demo` and `docker run … emulator`.
FROM base AS demo
COPY --from=demo-deps /app/package.json ./package.json
COPY --from=demo-deps /app/node_modules ./node_modules
COPY --from=build /app/packages/emulator/package.json ./packages/emulator/package.json
COPY --from=build /app/packages/emulator/dist ./packages/emulator/dist
COPY --from=build /app/dist ./dist
# config/ carries the example config, the example seed and the demo's data.
COPY config ./config
USER 10001:10001
VOLUME ["/var/lib/orgsync"]
EXPOSE 9464
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["demo"]

# The default target (the last stage): the sync and its production dependencies only.
FROM base AS runtime
COPY --from=prod-deps /app/package.json ./package.json
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# config/ carries the example config and files the sync's docs refer to.
COPY config ./config
USER 10001:10001
# The state DB (mirror, ownership, run history, lease); point state.path at /var/lib/orgsync/orgsync.db.
VOLUME ["/var/lib/orgsync"]
# /metrics /healthz /readyz /status of `orgsync daemon` (metrics.listen).
EXPOSE 9464
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["--help"]
