/** What `npm run contracts` writes, and which checked-in files differ from it. */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { authorizationTableMarkdown, buildDocuments, SIGNING_SPEC, subjectsTableMarkdown, visibilityTableMarkdown } from '@agora/contracts';
import { signingTestVectors } from '@agora/identity';
import { natsAuthorization, natsServiceUsersConf, natsServiceUsersMarkdown } from '@agora/messaging';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const GENERATED_DIR = join(ROOT, 'libs', 'contracts', 'generated');
/** The documentation files that hold generated sections, relative to the repository's root. */
export const SIGNING_DOC = 'docs/any-language-agents.md';
export const SECURITY_DOC = 'docs/security.md';
export const SUBJECTS_DOC = 'docs/subjects.md';

export const SPEC_BEGIN = '<!-- signing-spec: generated from libs/contracts/src/signing-spec.ts by npm run contracts -->';
export const SPEC_END = '<!-- /signing-spec -->';
export const AUTHZ_BEGIN = '<!-- authorization: generated from libs/contracts (authorizationTableMarkdown) by npm run contracts -->';
export const AUTHZ_END = '<!-- /authorization -->';
export const VISIBILITY_BEGIN = '<!-- visibility: generated from libs/contracts (visibilityTableMarkdown) by npm run contracts -->';
export const VISIBILITY_END = '<!-- /visibility -->';
export const NATS_USERS_BEGIN = '<!-- nats-service-users: generated from libs/messaging (natsServiceUsersMarkdown) by npm run contracts -->';
export const NATS_USERS_END = '<!-- /nats-service-users -->';
export const SUBJECTS_BEGIN = '<!-- subjects: generated from libs/contracts (subjectsTableMarkdown) by npm run contracts -->';
export const SUBJECTS_END = '<!-- /subjects -->';
/** The NATS users of the processes, one per service (generated whole), and the bootstrap users file that lists them. */
export const SERVICES_CONF = 'deploy/nats/services.conf';
export const AUTH_SERVICES_CONF = 'deploy/nats/auth-services.conf';

/** Relative path under libs/contracts/generated/ -> content. */
export function generatedFiles(): Record<string, string> {
  const { files } = buildDocuments();
  return { ...files, 'test-vectors.json': `${JSON.stringify(signingTestVectors(), null, 2)}\n` };
}

function between(doc: string, name: string, begin: string, end: string, content: string): string {
  const from = doc.indexOf(begin);
  const to = doc.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${name} has no ${begin} ... ${end} markers`);
  return `${doc.slice(0, from + begin.length)}\n${content}${doc.slice(to)}`;
}

/** Each documentation file with generated sections -> its text with them regenerated between their markers: the signing specification, the authorization, visibility, NATS users and subjects tables; and the NATS users files of the services (whole). */
export function docsWithGeneratedSections(): Record<string, string> {
  const signing = readFileSync(join(ROOT, SIGNING_DOC), 'utf8');
  const security = readFileSync(join(ROOT, SECURITY_DOC), 'utf8');
  const subjects = readFileSync(join(ROOT, SUBJECTS_DOC), 'utf8');
  const withAuthz = between(security, SECURITY_DOC, AUTHZ_BEGIN, AUTHZ_END, authorizationTableMarkdown());
  const withVisibility = between(withAuthz, SECURITY_DOC, VISIBILITY_BEGIN, VISIBILITY_END, visibilityTableMarkdown());
  return {
    [SIGNING_DOC]: between(signing, SIGNING_DOC, SPEC_BEGIN, SPEC_END, SIGNING_SPEC),
    [SECURITY_DOC]: between(withVisibility, SECURITY_DOC, NATS_USERS_BEGIN, NATS_USERS_END, natsServiceUsersMarkdown()),
    [SUBJECTS_DOC]: between(subjects, SUBJECTS_DOC, SUBJECTS_BEGIN, SUBJECTS_END, subjectsTableMarkdown()),
    [SERVICES_CONF]: natsServiceUsersConf(),
    [AUTH_SERVICES_CONF]: natsAuthorization([], { services: true }),
  };
}

/** Writes the documentation files' generated sections; returns the files written. */
export function writeGeneratedSections(): string[] {
  const docs = docsWithGeneratedSections();
  for (const [path, text] of Object.entries(docs)) writeFileSync(join(ROOT, path), text);
  return Object.keys(docs);
}

export function listFiles(dir: string, base = dir): string[] {
  let out: string[] = [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out = out.concat(listFiles(path, base));
    else out.push(relative(base, path));
  }
  return out.sort();
}

/** Paths that differ between what would be generated and the files on disk (the documentation files with generated sections included). */
export function staleFiles(dir = GENERATED_DIR): string[] {
  const files = generatedFiles();
  const onDisk = new Set(listFiles(dir));
  const stale = Object.keys(files).filter((path) => !onDisk.has(path) || readFileSync(join(dir, path), 'utf8') !== files[path]);
  for (const path of onDisk) if (!(path in files)) stale.push(path);
  for (const [path, text] of Object.entries(docsWithGeneratedSections())) if (readFileSync(join(ROOT, path), 'utf8') !== text) stale.push(path);
  return stale.sort();
}
