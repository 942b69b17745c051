'use strict';
/**
 * The Node flags `npm start` runs the panel with (package.json `config.panelNodeFlags`): the
 * benchmark starts its panel with the same ones, so that it measures what operators run.
 * BENCH_PANEL_FLAGS replaces them for one run (to try other flags: "--max-old-space-size=192").
 */
const pkg = require('../../package.json');

const PANEL_NODE_FLAGS = String(process.env.BENCH_PANEL_FLAGS ?? pkg.config?.panelNodeFlags ?? '').split(/\s+/).filter(Boolean);

module.exports = { PANEL_NODE_FLAGS };
