// Owns the rules of the console's forms: the password rule (the spec's strength rule), the registration fields
// (the spec's onboarding table) and the one-time code box. The server validates with them; the browser script
// (client/app.ts) bundles this same module for inline feedback. Pure code (no Node or DOM API), so it compiles
// under both the server's and the browser's TypeScript settings.

export const PASSWORD_MIN = 8;
/** An upper bound keeps hashing cost bounded for absurd inputs. */
export const PASSWORD_MAX = 128;

export interface PasswordRule {
  id: 'length' | 'upper' | 'lower' | 'digit' | 'symbol';
  label: string;
  test: (pw: string) => boolean;
}

/** The spec: at least 8 characters with an upper-case letter, a lower-case letter, a digit and a symbol. */
export const PASSWORD_RULES: PasswordRule[] = [
  { id: 'length', label: `At least ${PASSWORD_MIN} characters`, test: (pw) => pw.length >= PASSWORD_MIN },
  { id: 'upper', label: 'An upper-case letter', test: (pw) => /\p{Lu}/u.test(pw) },
  { id: 'lower', label: 'A lower-case letter', test: (pw) => /\p{Ll}/u.test(pw) },
  { id: 'digit', label: 'A digit', test: (pw) => /\p{Nd}/u.test(pw) },
  { id: 'symbol', label: 'A symbol, such as ! ? # %', test: (pw) => /[^\p{L}\p{N}\s]/u.test(pw) },
];

/** The rules a password fails; empty when it is acceptable. */
export function passwordProblems(pw: string): string[] {
  if (pw.length > PASSWORD_MAX) return [`At most ${PASSWORD_MAX} characters`];
  return PASSWORD_RULES.filter((r) => !r.test(pw)).map((r) => r.label);
}

export interface RegistrationInput {
  firstName: string;
  lastName: string;
  email: string;
  company: string;
  website: string;
}

export type FieldErrors = Partial<Record<keyof RegistrationInput, string>>;

/**
 * A bare addr-spec (RFC 5322 dot-atom local part @ a dotted host name): no display name (`Name <a@b>`),
 * no group syntax (`g: a@b;`), no quoted local part, no comments, no IP literal. What we send mail to
 * must be one mailbox and nothing a mail library could read as a list or a header.
 */
const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const EMAIL = new RegExp(`^${ATEXT}(\\.${ATEXT})*@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$`);

/** Whether `email` is one strict addr-spec (see EMAIL); the local part is at most 64 characters. */
export function isAddrSpec(email: string): boolean {
  return email.length <= 254 && email.indexOf('@') <= 64 && EMAIL.test(email);
}
/** `https://<domain>`: https, a dotted host name, nothing after it but an optional slash. */
const WEBSITE = /^https:\/\/(([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63})\/?$/i;

/** "example.com" means https://example.com; an explicit other scheme (http://) is left to be refused. */
function withHttps(site: string): string {
  return site && !/^[a-z][a-z0-9+.-]*:\/\//i.test(site) ? `https://${site}` : site;
}

/** The website as stored (`https://<lower-case domain>`), or null when it is not one. */
function canonicalWebsite(value: string): string | null {
  const site = WEBSITE.exec(withHttps(value.trim()));
  return site ? `https://${site[1]!.toLowerCase()}` : null;
}

/**
 * Each rule a form input can name in `data-rule`: the message for a bad value, '' for a good one. Values are
 * read trimmed, as the server stores them.
 */
export const FIELD_CHECKS = {
  required: (v: string) => (v.trim() ? '' : 'This field is required.'),
  name: (v: string) => (!v.trim() ? 'This field is required.' : v.trim().length > 100 ? 'Use at most 100 characters.' : ''),
  company: (v: string) => (!v.trim() ? 'Enter your company name.' : v.trim().length > 200 ? 'Use at most 200 characters.' : ''),
  email: (v: string) => (!v.trim() ? 'Enter your work e-mail address.' : isAddrSpec(v.trim()) ? '' : 'Enter an e-mail address like name@company.com.'),
  website: (v: string) =>
    !v.trim() ? 'Enter your company website.' : canonicalWebsite(v) ? '' : 'Enter the domain only, like example.com or https://example.com.',
  /** A TOTP code: six digits (spaces allowed, as authenticator apps group them). */
  code: (v: string) => (/^\d{6}$/.test(v.replace(/\s+/g, '')) ? '' : 'Enter the 6-digit code from your authenticator app.'),
} satisfies Record<string, (value: string) => string>;

export type FieldRule = keyof typeof FIELD_CHECKS;

function text(v: unknown): string {
  return typeof v === 'string' ? v.trim() : '';
}

export function readRegistration(body: Record<string, unknown>): { input: RegistrationInput; errors: FieldErrors } {
  const raw = { firstName: text(body.firstName), lastName: text(body.lastName), email: text(body.email).toLowerCase(), company: text(body.company) };
  const website = text(body.website);
  const input: RegistrationInput = { ...raw, website: canonicalWebsite(website) ?? withHttps(website) };
  const errors: FieldErrors = {};
  const checks: Array<[keyof RegistrationInput, string]> = [
    ['firstName', FIELD_CHECKS.name(raw.firstName)],
    ['lastName', FIELD_CHECKS.name(raw.lastName)],
    ['email', FIELD_CHECKS.email(raw.email)],
    ['company', FIELD_CHECKS.company(raw.company)],
    ['website', FIELD_CHECKS.website(website)],
  ];
  for (const [field, problem] of checks) if (problem) errors[field] = problem;
  return { input, errors };
}
