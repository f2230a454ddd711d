-- Sessions keep only the SHA-256 (hex) of their cookie's token from now on (web hashes the cookie's
-- token to look a session up), so a database reader can no longer mint a cookie for a live session.
-- Every row before this migration holds the token as sent; hashed in place, signed-in users stay signed in.
UPDATE "sessions" SET "token" = encode(sha256(convert_to("token", 'UTF8')), 'hex');
