/**
 * The `xml` parser of configuration files (src/agent/config-files/xml.ts) on real-looking files: a
 * Space Engineers dedicated-server config (declaration, namespaces, comments), a nested path that is
 * created, a missing file, and files it refuses to touch (a DOCTYPE with entities, malformed XML,
 * another root element).
 */
import { editConfig, ConfigParseError } from '../../src/agent/config-files/edit.js';

const SPACE_ENGINEERS = `<?xml version="1.0"?>
<MyConfigDedicated xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <!-- written by the game -->
  <SessionSettings>
    <GameMode>Survival</GameMode>
    <MaxPlayers>4</MaxPlayers>
    <EnableCopyPaste>true</EnableCopyPaste>
  </SessionSettings>
  <LoadWorld />
  <IP>127.0.0.1</IP>
  <SteamPort>8766</SteamPort>
  <ServerPort>27016</ServerPort>
  <ServerName>My &amp; friends' server</ServerName>
</MyConfigDedicated>
`;

const xml = (text: string, find: Record<string, string>) => editConfig('xml', text, Object.entries(find));

test('an existing element gets the value as its text; everything else stays as it was', () => {
  const out = xml(SPACE_ENGINEERS, { 'MyConfigDedicated.ServerPort': '27999', 'MyConfigDedicated.IP': '0.0.0.0', 'MyConfigDedicated.SessionSettings.MaxPlayers': '16' });
  expect(out).toBe(
    SPACE_ENGINEERS.replace('<ServerPort>27016<', '<ServerPort>27999<')
      .replace('<IP>127.0.0.1<', '<IP>0.0.0.0<')
      .replace('<MaxPlayers>4<', '<MaxPlayers>16<')
      .replace('<LoadWorld />', '<LoadWorld/>'), // the serialiser's one difference: no space before />
  );
});

test('a value is written as text, escaped (never as markup)', () => {
  const out = xml(SPACE_ENGINEERS, { 'MyConfigDedicated.ServerName': '<b>x</b> & "y"' });
  expect(out).toContain('<ServerName>&lt;b&gt;x&lt;/b&gt; &amp; "y"</ServerName>');
  expect(xml(out, { 'MyConfigDedicated.ServerName': 'z' })).toContain('<ServerName>z</ServerName>');
});

test('missing elements on the way are created, indented like their siblings', () => {
  const out = xml(SPACE_ENGINEERS, { 'MyConfigDedicated.SessionSettings.Password': 'secret', 'MyConfigDedicated.Network.Query.Port': '27017' });
  expect(out).toContain('    <EnableCopyPaste>true</EnableCopyPaste>\n    <Password>secret</Password>\n  </SessionSettings>');
  expect(out).toContain('  <ServerName>My &amp; friends\' server</ServerName>\n  <Network>\n      <Query>\n          <Port>27017</Port>\n      </Query>\n  </Network>\n</MyConfigDedicated>\n');
});

test('a missing (empty) file is created with the root element', () => {
  expect(xml('', { 'config.server.port': '25565', 'config.motd': 'hi' })).toBe(
    '<?xml version="1.0" encoding="UTF-8"?>\n<config>\n    <server>\n        <port>25565</port>\n    </server>\n    <motd>hi</motd>\n</config>\n',
  );
});

test('a file with a DOCTYPE is refused: no entity is expanded (billion laughs, external entities)', () => {
  const bomb = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<lolz><port>&lol3;</port></lolz>
`;
  expect(() => xml(bomb, { 'lolz.port': '1' })).toThrow(ConfigParseError);
  const xxe = '<?xml version="1.0"?>\n<!DOCTYPE c [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<c><port>&x;</port></c>\n';
  expect(() => xml(xxe, { 'c.port': '1' })).toThrow(/DOCTYPE/);
  const plain = '<!DOCTYPE c>\n<c><port>1</port></c>\n';
  expect(() => xml(plain, { 'c.port': '2' })).toThrow(/DOCTYPE/);
});

test('malformed XML and another root element are refused (the file stays as it is)', () => {
  expect(() => xml('<config><port>1</config>', { 'config.port': '2' })).toThrow(/not valid XML/);
  expect(() => xml('just text', { 'config.port': '2' })).toThrow(ConfigParseError);
  expect(() => xml(SPACE_ENGINEERS, { 'Config.ServerPort': '2' })).toThrow(/root element is <MyConfigDedicated>, not <Config>/);
});

test('keys that are not element paths (`*`, an index, one name) are skipped', () => {
  expect(xml(SPACE_ENGINEERS, { 'MyConfigDedicated.*': 'x', 'MyConfigDedicated.IP[0]': 'x', MyConfigDedicated: 'x' })).toBe(SPACE_ENGINEERS);
});
