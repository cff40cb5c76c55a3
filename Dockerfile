# One image for both roles; the command picks the role (api or worker).
# Node 24 LTS. Pin a digest (node:24-bookworm-slim@sha256:...) for reproducible builds.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps ./apps
COPY libs ./libs
COPY bench ./bench
COPY test/utils ./test/utils
RUN npm ci && npm prune --omit=dev --ignore-scripts

FROM node:24-bookworm-slim
# bubblewrap: one sandbox per shell command (SPEC §10; Debian's bwrap is not setuid, it needs
# unprivileged user namespaces: deploy/README.md). util-linux: prlimit, setpriv; bsdutils: script
# (pty sessions). tini: PID 1 that forwards signals to node and reaps orphaned processes.
RUN apt-get update \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends bubblewrap tini util-linux bsdutils \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Session workspaces; writable by the image's user (the worker's deployments may run it as root
# so it can start each sandbox under a per-tenant uid: deploy/README.md).
ENV CODEMODE_WORKSPACE_ROOT=/data/workspaces
RUN mkdir -p /data/workspaces && chown node:node /data/workspaces
USER node
EXPOSE 3000 9464
# tini forwards SIGTERM to node (the app drains running cells before it exits) and reaps orphans.
# A Kubernetes `command` replaces this ENTRYPOINT: the manifests start /usr/bin/tini themselves.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/apps/api/src/main.js"]
