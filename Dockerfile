# One image for the API and the worker; docker-compose.yml picks the command.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY core ./core
COPY api ./api
COPY db ./db
COPY services ./services
COPY providers ./providers
COPY infra ./infra
COPY temporal ./temporal
COPY workflows ./workflows
COPY activities ./activities
COPY workers ./workers
COPY scripts ./scripts
COPY tsconfig.json ./
USER node
EXPOSE 3000
CMD ["npx", "tsx", "api/main.ts"]
