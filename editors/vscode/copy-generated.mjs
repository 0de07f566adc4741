// Copies what the ckql package generates (npm run build at the repository's root) into the
// extension: the TextMate grammars and the config file's JSON Schema. One source of truth: the
// copies are not committed.
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';

const root = new URL('../../', import.meta.url);
mkdirSync(new URL('syntaxes/', import.meta.url), { recursive: true });
mkdirSync(new URL('schemas/', import.meta.url), { recursive: true });
for (const name of readdirSync(new URL('grammar/', root)).filter((file) => file.endsWith('.tmLanguage.json'))) {
  copyFileSync(new URL(`grammar/${name}`, root), new URL(`syntaxes/${name}`, import.meta.url));
}
copyFileSync(new URL('schema/ckql-config.schema.json', root), new URL('schemas/ckql-config.schema.json', import.meta.url));
copyFileSync(new URL('LICENSE', root), new URL('LICENSE', import.meta.url));
