/**
 * The local AWS stand-in `npm start` runs when no AWS endpoint or credentials are configured (S3 for
 * attachments and imports, SES). The admin CLI points at the same one under the same condition, so
 * `npm run admin -- import:create` stores its file where the running service reads it.
 */
export const LOCAL_AWS_PORT = 5055;

/** True when nothing points at a real AWS: then the stand-in's endpoint and credentials are set in `env`. */
export function useLocalAwsStandIn(env: NodeJS.ProcessEnv): boolean {
  if (env.AWS_ENDPOINT_URL || env.AWS_ACCESS_KEY_ID) return false;
  Object.assign(env, { AWS_ENDPOINT_URL: `http://127.0.0.1:${LOCAL_AWS_PORT}`, AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' });
  return true;
}
