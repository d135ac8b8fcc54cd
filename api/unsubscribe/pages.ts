/**
 * The pages a person sees after following an unsubscribe link. They are served to anyone holding the link,
 * so they show the link's own address and nothing else about the workspace or the person.
 */
const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] ?? char);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 32rem; margin: 4rem auto; padding: 0 1rem; color: #222; }
  button { font: inherit; padding: .6rem 1.2rem; border: 0; border-radius: .3rem; background: #222; color: #fff; cursor: pointer; }
</style>
</head>
<body>
${body}
</body>
</html>
`;
}

/** GET: asks, and changes nothing. The form posts to the page's own URL with RFC 8058's body. */
export function confirmationPage(address: string): string {
  return page('Unsubscribe', `<h1>Unsubscribe</h1>
<p>Stop sending these emails to <strong>${escapeHtml(address)}</strong>?</p>
<form method="post">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<button type="submit">Unsubscribe</button>
</form>`);
}

export function unsubscribedPage(address: string): string {
  return page('Unsubscribed', `<h1>You are unsubscribed</h1>
<p><strong>${escapeHtml(address)}</strong> will receive no more of these emails.</p>`);
}

export function invalidLinkPage(): string {
  return page('Link not valid', `<h1>This link is not valid</h1>
<p>Use the unsubscribe link of an email you received, exactly as it was sent.</p>`);
}
