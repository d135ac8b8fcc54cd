import { sanitizeReceivedHtml } from '../../core/inbox/received-html';

describe('received HTML, sanitized for the API', () => {
  it('scripts, styles, frames and forms go with their content', () => {
    const html = '<p>Hi</p><script>alert(1)</script><style>body{display:none}</style><iframe src="https://x.example"></iframe><form action="https://x.example"><input name="pw"></form><svg><script>1</script></svg>';
    expect(sanitizeReceivedHtml(html)).toBe('<p>Hi</p>');
  });

  it('event handlers and javascript: links are removed; links open apart without referrer', () => {
    expect(sanitizeReceivedHtml('<p onclick="steal()" onmouseover="x()">Hi</p><a href="javascript:alert(1)">a</a><a href="https://ok.example/">b</a>')).toBe(
      '<p>Hi</p><a target="_blank" rel="noopener noreferrer nofollow">a</a><a href="https://ok.example/" target="_blank" rel="noopener noreferrer nofollow">b</a>',
    );
  });

  it('a remote image (a tracking pixel) is not loaded: its src is kept aside; embedded cid: and data: images stay', () => {
    expect(sanitizeReceivedHtml('<img src="https://track.example/p.gif" width="1" height="1">')).toBe('<img width="1" height="1" data-blocked-src="https://track.example/p.gif" />');
    expect(sanitizeReceivedHtml('<img src="cid:logo@x" alt="Logo">')).toBe('<img src="cid:logo@x" alt="Logo" />');
    expect(sanitizeReceivedHtml('<img src="data:image/png;base64,iVBORw0KGgo=">')).toBe('<img src="data:image/png;base64,iVBORw0KGgo=" />');
    expect(sanitizeReceivedHtml('<img srcset="https://track.example/a.png 2x" src="cid:a@x">')).toBe('<img src="cid:a@x" />');
  });

  it('styles keep plain properties; url(), expression() and position (an overlay) are dropped', () => {
    expect(sanitizeReceivedHtml('<div style="color: red; background-image: url(https://t.example/p); position: fixed; width: expression(alert(1)); font-weight: bold">x</div>')).toBe(
      '<div style="color:red;font-weight:bold">x</div>',
    );
    expect(sanitizeReceivedHtml('<div style="background: url(https://t.example/p)" background="https://t.example/b.png">x</div>')).toBe('<div>x</div>');
  });

  it('meta refresh and base are dropped; ordinary mail markup (tables, fonts, lists) stays', () => {
    expect(sanitizeReceivedHtml('<meta http-equiv="refresh" content="0;url=https://x.example"><base href="https://x.example/"><p>ok</p>')).toBe('<p>ok</p>');
    const mail = '<table width="100%" cellpadding="0"><tr><td colspan="2" bgcolor="#fff"><font color="#333">Hello</font><ul><li>one</li></ul></td></tr></table>';
    expect(sanitizeReceivedHtml(mail)).toBe('<table width="100%" cellpadding="0"><tr><td colspan="2" bgcolor="#fff"><font color="#333">Hello</font><ul><li>one</li></ul></td></tr></table>');
  });
});
