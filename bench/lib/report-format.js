'use strict';
/** How the report writes its figures: rounded to two decimals, '—' when missing; ratios of two figures. */

const fmt = (v, unit = '') => (v === null || v === undefined || Number.isNaN(v) ? '—' : `${typeof v === 'number' ? Math.round(v * 100) / 100 : v}${unit}`);
const ratio = (a, b) => (typeof a === 'number' && typeof b === 'number' && b > 0 ? Math.round((a / b) * 100) / 100 : null);

module.exports = { fmt, ratio };
