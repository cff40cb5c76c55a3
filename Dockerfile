# One image for both roles; the command picks the role (api or worker).
FROM node:20.20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps ./apps
COPY libs ./libs
COPY bench ./bench
COPY test/utils ./test/utils
RUN npm ci && npm prune --omit=dev --ignore-scripts

FROM node:20.20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000 9464
# SIGTERM goes straight to node: the app drains running cells before it exits.
CMD ["node", "dist/apps/api/src/main.js"]
