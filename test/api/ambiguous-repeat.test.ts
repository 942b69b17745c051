/**
 * The check that refuses a blueprint's `regex:` rule that can backtrack for ever (values are checked
 * in the panel's process): a repeated group holding a quantifier or an alternation at any depth is
 * refused; what the 14 Pterodactyl eggs use, and groups that are not repeated, pass. Escapes and
 * character classes are not taken for groups.
 */
import { repeatsAmbiguousGroup } from '../../src/blueprints/ambiguous-repeat';

test.each(['^(a+)+$', '^((a)+)+$', '^(?:(?:a)+)+$', '^(a|a)*$', '(\\w*){2,}', '(a+){2,5}', '(?<n>a*)+', '((ab)*c)*', '(a?)+', '(?:x|(?:y+))+?'])('%s is refused', (src) => {
  expect(repeatsAmbiguousGroup(src)).toBe(true);
});

test.each(['^[0-9\\.\\-]+$', '^(232250)$', '^([\\w\\d._-]+)(\\.jar)$', '^([a-zA-Z0-9.\\-_]+)$', '^(\\w{1,20})$', '^[\\w.-]*$', '(a+){1}', '(a+)?', '[(a+)]+', '\\(a+\\)+', '(ab)+', '(?=a+)b', '^(latest|[0-9.]+)$', '[^]]+', '(?<=a+)b'])(
  '%s passes',
  (src) => {
    expect(repeatsAmbiguousGroup(src)).toBe(false);
  },
);
