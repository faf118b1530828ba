/** mcptap's own version, from package.json (dist/ and src/ both sit one level below the package root). */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export const MCPTAP_VERSION: string = (require('../package.json') as { version: string }).version;
