import { AttachmentSourcesSchema } from '../../api/http/attachment-source-schemas';
import {
  base64DecodedLength,
  contentIdProblem,
  contentTypeProblem,
  decodeBase64Content,
  downloadDisposition,
  filenameProblem,
  inferContentType,
  isExecutableFilename,
} from '../../core/attachments';

describe('executable attachments are refused however the name is dressed', () => {
  it.each([
    'setup.exe', 'run.bat', 'run.cmd', 'command.com', 'script.js', 'app.jar', 'install.msi', 'macro.vbs', 'screen.scr',
    'profile.ps1', 'shortcut.lnk', 'page.hta', 'installer.msix',
    // double extension, case, trailing dots and spaces that Windows drops
    'invoice.pdf.exe', 'INVOICE.EXE', 'Invoice.ExE', 'invoice.exe.', 'invoice.exe...', 'invoice.exe  ', 'invoice.exe. . ',
    // right-to-left override: displays as "invoiceexe.pdf"; and other invisible characters
    'invoice\u202Efdp.exe', 'photo\u202Egpj.scr', 'report\u200B.exe', 'report.e\u200Dxe', 'report.ex\u2066e',
    // full-width letters fold to ASCII; NTFS stream suffixes and paths are ignored
    'report.ｅｘｅ', 'report.exe::$DATA', 'report.exe:zone', 'C:report.exe', 'report.pdf:evil.exe', 'C:\\temp\\report.exe',
    '../../report.exe', '.exe',
  ])('%j', (filename) => {
    expect(isExecutableFilename(filename)).toBe(true);
    expect(filenameProblem(filename)).toMatch(/^executable files are not accepted \(\.\w+\)$/);
  });

  it.each(['report.pdf', 'photo.jpeg', 'archive.tar.gz', 'notes', 'example.com.pdf', 'node.js.md', 'my.exe.backup.txt', 'résumé.docx', 'notes:v2.txt'])(
    '%j is an ordinary file',
    (filename) => {
      expect(isExecutableFilename(filename)).toBe(false);
      expect(filenameProblem(filename)).toBeNull();
    },
  );

  it('control characters in a name are refused (a NUL can cut the name short downstream)', () => {
    expect(filenameProblem('report.pdf\u0000.exe')).toBe('must not contain control characters');
    expect(filenameProblem('two\nlines.txt')).toBe('must not contain control characters');
  });
});

describe('content types', () => {
  it('are inferred from the file name, octet-stream when unknown', () => {
    expect(inferContentType('report.pdf')).toBe('application/pdf');
    expect(inferContentType('Photo.JPG')).toBe('image/jpeg');
    expect(inferContentType('data.csv')).toBe('text/csv');
    expect(inferContentType('noextension')).toBe('application/octet-stream');
  });

  it('must look like a media type, and not an executable one', () => {
    expect(contentTypeProblem('application/pdf')).toBeNull();
    expect(contentTypeProblem('text/plain; charset=utf-8')).toBeNull();
    expect(contentTypeProblem('pdf')).toMatch(/media type/);
    expect(contentTypeProblem('application/x-msdownload')).toBe('executable content types are not accepted');
    expect(contentTypeProblem('application/java-archive')).toBe('executable content types are not accepted');
  });
});

describe('content ids', () => {
  it('go between angle brackets in a header, so they may not hold brackets, spaces or controls', () => {
    expect(contentIdProblem('logo@acme')).toBeNull();
    expect(contentIdProblem('a b')).not.toBeNull();
    expect(contentIdProblem('<logo>')).not.toBeNull();
    expect(contentIdProblem('logo\r\nBcc: x')).not.toBeNull();
  });
});

describe('base64 content', () => {
  it('decodes, tolerating MIME line breaks', () => {
    const decoded = decodeBase64Content('aGVs\r\nbG8=');
    expect(decoded).toEqual({ ok: true, bytes: Buffer.from('hello') });
  });

  it('refuses a data: prefix and characters outside the alphabet instead of skipping them', () => {
    expect(decodeBase64Content('data:text/plain;base64,aGVsbG8=')).toEqual({ ok: false, problem: 'must be plain base64, without a data: prefix' });
    expect(decodeBase64Content('aGVs*bG8=')).toEqual({ ok: false, problem: 'is not valid base64' });
    expect(decodeBase64Content('a')).toEqual({ ok: false, problem: 'is not valid base64' });
  });

  it('its decoded length is known without decoding', () => {
    for (const text of ['', 'a', 'ab', 'abc', 'abcd', 'hello world!!']) {
      expect(base64DecodedLength(Buffer.from(text).toString('base64'))).toBe(text.length);
    }
  });
});

describe('downloads', () => {
  it('offer the file under its own name, with an ASCII fallback', () => {
    expect(downloadDisposition('Résumé "final".pdf')).toBe(
      `attachment; filename="R_sum_ _final_.pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%22final%22.pdf`,
    );
  });
});

describe('the attachments field of a send (shared by every send endpoint)', () => {
  const problems = (items: unknown) => {
    const parsed = AttachmentSourcesSchema.safeParse(items);
    return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  };

  it('accepts each of the three sources', () => {
    expect(
      problems([
        { id: '6f1d0c3e-8a1b-4c2d-9e3f-0a1b2c3d4e5f', contentId: 'logo' },
        { filename: 'a.txt', content: 'aGk=' },
        { filename: 'b.pdf', url: 'https://cdn.example.com/b.pdf', contentType: 'application/pdf' },
      ]),
    ).toEqual([]);
  });

  it('refuses no source or two, a missing filename, an executable name, a plain http URL and a 21st item', () => {
    expect(problems([{ filename: 'a.txt' }])).toEqual(['0: Give exactly one of id, content or url']);
    expect(problems([{ filename: 'a.txt', content: 'aGk=', url: 'https://x.example/a' }])).toEqual(['0: Give exactly one of id, content or url']);
    expect(problems([{ content: 'aGk=' }])).toEqual(['0.filename: Required with content or url']);
    expect(problems([{ filename: 'a.pdf.exe', content: 'aGk=' }])).toEqual(['0.filename: executable files are not accepted (.exe)']);
    expect(problems([{ filename: 'a.pdf', url: 'http://x.example/a.pdf' }])).toHaveLength(1);
    expect(problems(Array.from({ length: 21 }, () => ({ filename: 'a.txt', content: 'aGk=' })))).toHaveLength(1);
  });
});
