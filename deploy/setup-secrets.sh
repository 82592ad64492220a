#!/bin/sh
# Generates the secrets compose.yaml requires into deploy/.env (compose reads it from the compose file's
# folder), once: an existing value is kept, so running it again is harmless. Mode 600; .env is git-ignored.
#   APP_SECRET          console sessions, CSRF, links, TOTP encryption
#   MARKETPLACE_SECRET  the secret the marketplace signs entitlement events with: replace it with the value
#                       the marketplace gives you (docs/billing.md)
#   REDIS_PASSWORD      Redis `requirepass`; the apps get it in REDIS_URL
#   MONGO_PASSWORD      the MongoDB user `lc` (created on the first start of an empty volume)
# Rotating them: docs/security.md, "Database and Redis credentials".
set -eu
env_file="$(dirname "$0")/.env"
umask 077
touch "$env_file"
for name in APP_SECRET MARKETPLACE_SECRET REDIS_PASSWORD MONGO_PASSWORD; do
  if ! grep -q "^$name=" "$env_file"; then
    # Hex: safe inside redis:// and mongodb:// URLs without escaping.
    printf '%s=%s\n' "$name" "$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')" >>"$env_file"
    echo "generated $name"
  fi
done
chmod 600 "$env_file"
grep -q '^PUBLIC_BASE_URL=' "$env_file" || echo "now add PUBLIC_BASE_URL=https://<the address your TLS proxy serves> to $env_file"
