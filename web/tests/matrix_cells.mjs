// Reading the matrix view's canvas heatmaps in browser tests (not a test file itself). The
// cells are pixels of a <canvas>, so tests ask the page the way the pointer does: for the
// centre of every cell of the canvas, `window.tracelogicMatrixCell(figure, x, y)` names the
// cell the view maps that point to and the value it holds there, and the canvas pixel at the
// same point shows what was drawn. A matrix drawn wrong, shifted, or mapped wrong fails.

/** Every cell of matrix figure `figure` ('heatmap' or 'binary'), row-major: `{ row, col, cell,
 * pixel }` with `cell` the page's answer for the cell centre (null outside the cells) and
 * `pixel` the canvas's RGBA there. */
export async function drawnCells(page, figure) {
  await page.waitForSelector(`#${figure} svg[data-figure-key]`);
  // The view installs the hook and records what it drew in effects that run after the figure's
  // elements are in the page: wait until the hook answers for the first cell's centre.
  await page.waitForFunction((figure) => {
    const svg = document.querySelector(`#${figure} svg[data-figure-key]`);
    const canvas = document.querySelector(`#${figure} canvas.cells`);
    if (typeof window.tracelogicMatrixCell !== 'function' || !svg || !canvas) return false;
    const side = Number(svg.dataset.side);
    const box = canvas.getBoundingClientRect();
    return side > 0 && window.tracelogicMatrixCell(figure, box.left + (0.5 * box.width) / side, box.top + (0.5 * box.height) / side) !== null;
  }, figure, { timeout: 30_000 });
  return page.evaluate((figure) => {
    const svg = document.querySelector(`#${figure} svg[data-figure-key]`);
    const canvas = document.querySelector(`#${figure} canvas.cells`);
    const side = Number(svg.dataset.side);
    const box = canvas.getBoundingClientRect();
    const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    const out = [];
    for (let row = 0; row < side; row++) {
      for (let col = 0; col < side; col++) {
        const answer = window.tracelogicMatrixCell(figure, box.left + ((col + 0.5) * box.width) / side, box.top + ((row + 0.5) * box.height) / side);
        const px = Math.min(canvas.width - 1, Math.floor(((col + 0.5) * canvas.width) / side));
        const py = Math.min(canvas.height - 1, Math.floor(((row + 0.5) * canvas.height) / side));
        const i = (py * canvas.width + px) * 4;
        out.push({ row, col, cell: answer && JSON.parse(answer), pixel: [...data.subarray(i, i + 4)] });
      }
    }
    return out;
  }, figure);
}

/** Check that every point maps to its own cell and return the cells keyed "row,col". */
export function byKey(cells, assert) {
  const out = new Map();
  for (const c of cells) {
    assert.ok(c.cell, `the centre of cell ${c.row},${c.col} maps to a cell`);
    assert.deepEqual([c.cell.row, c.cell.col], [c.row, c.col], 'the pointer maps to the cell drawn under it');
    out.set(`${c.row},${c.col}`, c);
  }
  return out;
}

/** "row,col" of the cells drawn (non-transparent pixels). */
export function painted(cells) {
  return new Set(cells.filter((c) => c.pixel[3] > 0).map((c) => `${c.row},${c.col}`));
}

/** "row,col" of the binary figure's cells drawn in the kept colour (the cells the page says
 * are kept must all share one colour, different from the removed cells' colour). */
export function keptCells(cells, assert) {
  const kept = cells.filter((c) => c.cell?.kept);
  const colour = (c) => c.pixel.join(',');
  const keptColours = new Set(kept.map(colour));
  assert.ok(keptColours.size <= 1, `kept cells share one colour: ${[...keptColours]}`);
  const removed = cells.filter((c) => c.cell && !c.cell.kept && c.cell.value > 0);
  for (const c of removed) assert.ok(!keptColours.has(colour(c)) && c.pixel[3] > 0, `removed cell ${c.row},${c.col} drawn apart`);
  return new Set(cells.filter((c) => c.pixel[3] > 0 && keptColours.has(colour(c))).map((c) => `${c.row},${c.col}`));
}

/** Move the mouse to the centre of cell (`row`, `col`) of figure `figure`. */
export async function hoverCell(page, figure, row, col) {
  const side = Number(await page.getAttribute(`#${figure} svg[data-figure-key]`, 'data-side'));
  const canvas = page.locator(`#${figure} canvas.cells`);
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  await page.mouse.move(box.x + ((col + 0.5) * box.width) / side, box.y + ((row + 0.5) * box.height) / side);
}

/** Poll until `check(cells)` of figure `figure` holds (the worker answers a new request). */
export async function waitForCells(page, figure, check, timeout = 30_000) {
  const end = Date.now() + timeout;
  for (;;) {
    const cells = await drawnCells(page, figure);
    if (check(cells)) return cells;
    if (Date.now() > end) throw new Error(`#${figure}: the cells never reached the expected state`);
    await new Promise((ok) => setTimeout(ok, 200));
  }
}
