// Owns the registration fields' rules (the spec's onboarding table). The browser script mirrors them
// for inline feedback; this is the one the server trusts.
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

function text(v: unknown): string {
  return typeof v === 'string' ? v.trim() : '';
}

export function readRegistration(body: Record<string, unknown>): { input: RegistrationInput; errors: FieldErrors } {
  const input: RegistrationInput = {
    firstName: text(body.firstName),
    lastName: text(body.lastName),
    email: text(body.email).toLowerCase(),
    company: text(body.company),
    website: withHttps(text(body.website)),
  };
  const errors: FieldErrors = {};
  if (!input.firstName) errors.firstName = 'This field is required.';
  else if (input.firstName.length > 100) errors.firstName = 'Use at most 100 characters.';
  if (!input.lastName) errors.lastName = 'This field is required.';
  else if (input.lastName.length > 100) errors.lastName = 'Use at most 100 characters.';
  if (!input.email) errors.email = 'Enter your work e-mail address.';
  else if (!isAddrSpec(input.email)) errors.email = 'Enter an e-mail address like name@company.com.';
  if (!input.company) errors.company = 'Enter your company name.';
  else if (input.company.length > 200) errors.company = 'Use at most 200 characters.';
  const site = WEBSITE.exec(input.website);
  if (!input.website) errors.website = 'Enter your company website.';
  else if (!site) errors.website = 'Enter the domain only, like example.com or https://example.com.';
  else input.website = `https://${site[1]!.toLowerCase()}`;
  return { input, errors };
}
