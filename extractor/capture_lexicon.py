"""Words the decision capture rules know: technologies and patterns (with their aliases) and categories.

Kept apart from the rules so the lists can grow without touching the logic. Keys are lower-case
spellings as people type them; values are the canonical entity name.
"""

from __future__ import annotations

TECHNOLOGIES = {
    "postgres": "PostgreSQL", "postgresql": "PostgreSQL", "pg": "PostgreSQL", "mysql": "MySQL", "mariadb": "MariaDB",
    "sqlite": "SQLite", "redis": "Redis", "mongodb": "MongoDB", "mongo": "MongoDB", "dynamodb": "DynamoDB",
    "elasticsearch": "Elasticsearch", "kafka": "Kafka", "rabbitmq": "RabbitMQ", "sqs": "SQS", "celery": "Celery",
    "react": "React", "vue": "Vue", "svelte": "Svelte", "angular": "Angular", "next.js": "Next.js",
    "nextjs": "Next.js", "tailwind": "Tailwind CSS", "tailwindcss": "Tailwind CSS", "vite": "Vite",
    "webpack": "webpack", "esbuild": "esbuild", "typescript": "TypeScript", "javascript": "JavaScript",
    "python": "Python", "rust": "Rust", "golang": "Go", "java": "Java", "kotlin": "Kotlin", "node": "Node.js",
    "node.js": "Node.js", "nodejs": "Node.js", "deno": "Deno", "bun": "Bun", "pnpm": "pnpm", "npm": "npm",
    "yarn": "Yarn", "uv": "uv", "pip": "pip", "pipx": "pipx", "poetry": "Poetry", "conda": "conda",
    "docker": "Docker", "kubernetes": "Kubernetes", "k8s": "Kubernetes", "terraform": "Terraform",
    "helm": "Helm", "graphql": "GraphQL", "grpc": "gRPC", "rest": "REST", "jwt": "JWT", "oauth": "OAuth",
    "fastapi": "FastAPI", "django": "Django", "flask": "Flask", "express": "Express", "pytest": "pytest",
    "jest": "Jest", "vitest": "Vitest", "playwright": "Playwright", "cypress": "Cypress", "ruff": "ruff",
    "black": "black", "mypy": "mypy", "eslint": "ESLint", "prettier": "Prettier", "git": "git",
    "github actions": "GitHub Actions", "act": "act", "pydantic": "pydantic", "sqlalchemy": "SQLAlchemy",
    "prisma": "Prisma", "alembic": "Alembic", "nginx": "nginx", "aws": "AWS", "gcp": "GCP", "s3": "S3",
    "lambda": "AWS Lambda", "vercel": "Vercel", "audioworklet": "AudioWorklet", "websocket": "WebSocket",
    "websockets": "WebSocket", "protobuf": "protobuf", "openapi": "OpenAPI", "httpx": "httpx",
    "requests": "requests", "asyncio": "asyncio", "trio": "trio", "tokio": "tokio", "zod": "zod",
    "session cookies": "session-cookies", "session-cookies": "session-cookies",
}

PATTERNS = {
    "cursor-based pagination": "cursor-pagination", "cursor pagination": "cursor-pagination",
    "cursor-pagination": "cursor-pagination", "offset pagination": "offset-pagination",
    "circuit breaker": "circuit-breaker", "event sourcing": "event-sourcing", "cqrs": "CQRS",
    "feature flags": "feature-flags", "feature flag": "feature-flags", "monorepo": "monorepo",
    "microservices": "microservices", "dependency injection": "dependency-injection", "tdd": "TDD",
    "retries": "retries", "exponential backoff": "exponential-backoff", "rate limiting": "rate-limiting",
    "optimistic locking": "optimistic-locking", "soft delete": "soft-delete", "soft deletes": "soft-delete",
    "named exports": "named-exports", "default exports": "default-exports", "unit tests": "unit-tests",
    "unit test": "unit-tests", "integration tests": "integration-tests", "e2e tests": "e2e-tests",
    "type hints": "type-hints", "trunk-based development": "trunk-based-development", "rebase": "rebase",
    "squash merge": "squash-merge", "cross-platform": "cross-platform", "ci": "CI", "linting": "linting",
    "caching": "caching", "cache": "caching", "pagination": "pagination", "migrations": "migrations",
}

CATEGORIES = (
    ("database", ("PostgreSQL", "MySQL", "MariaDB", "SQLite", "Redis", "MongoDB", "DynamoDB", "SQLAlchemy",
                  "Prisma", "Alembic", "migrations", "database", "schema", "table", "query")),
    ("api", ("REST", "GraphQL", "gRPC", "OpenAPI", "cursor-pagination", "offset-pagination", "pagination",
             "endpoint", "api", "rate-limiting")),
    ("auth", ("JWT", "OAuth", "session-cookies", "auth", "login", "token")),
    ("frontend", ("React", "Vue", "Svelte", "Angular", "Next.js", "Tailwind CSS", "component", "css", "ui",
                  "named-exports", "default-exports", "AudioWorklet")),
    ("testing", ("pytest", "Jest", "Vitest", "Playwright", "Cypress", "TDD", "unit-tests", "integration-tests",
                 "e2e-tests", "test", "tests", "mock")),
    ("ci", ("GitHub Actions", "act", "CI", "pipeline", "workflow", "linting")),
    ("tooling", ("pnpm", "npm", "Yarn", "uv", "pip", "pipx", "Poetry", "conda", "Vite", "webpack", "esbuild",
                 "ruff", "black", "mypy", "ESLint", "Prettier", "git", "rebase", "squash-merge")),
    ("infrastructure", ("Docker", "Kubernetes", "Terraform", "Helm", "AWS", "GCP", "S3", "AWS Lambda",
                        "Vercel", "nginx", "Kafka", "RabbitMQ", "SQS", "Celery", "microservices")),
    ("architecture", ("event-sourcing", "CQRS", "circuit-breaker", "dependency-injection", "monorepo",
                      "caching", "retries", "exponential-backoff", "optimistic-locking", "soft-delete")),
)

# Capitalised words that are not technologies when they appear mid-sentence.
NOT_ENTITIES = frozenset({
    "I", "I'm", "I'd", "I've", "I'll", "OK", "Ok", "The", "This", "That", "We", "You", "It", "Claude", "Please",
    "Hey", "Yes", "No", "Also", "Then", "But", "And", "So", "Let", "Let's", "Monday", "Tuesday", "Wednesday",
    "Thursday", "Friday", "Saturday", "Sunday", "TODO", "README", "NOTE", "Actually", "Because", "Since",
})
