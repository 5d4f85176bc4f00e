# The provider, built from source. Used by docker-compose.yml for the provider and the demo-data job.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src src
COPY plugins plugins
COPY schemas schemas
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY data data
# The memory store's working copy of the demo events (EVENTS_FILE unset) is written here.
RUN mkdir var && chown node var
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The same node flags as `npm start` (package.json config.nodeFlags).
CMD ["node", "--max-semi-space-size=32", "--expose-gc", "dist/src/server.js"]
