//! A table's rows, the columns that fit a width, and the lines drawn.

use std::borrow::Cow;

use rayon::prelude::*;

use super::column::{Align, Column, Shorten};
use super::text::{cut, cut_middle, cut_words, width};

/// Columns are this many spaces apart.
const GAP: usize = 2;

/// Rows of cells under columns, drawn to fit a width.
#[derive(Debug, Clone)]
pub struct Table<'a> {
    pub(super) columns: Vec<Column>,
    /// Row after row, one cell per column.
    pub(super) cells: Vec<Cow<'a, str>>,
    /// The width of each cell, measured once.
    pub(super) widths: Vec<usize>,
    /// The widest cell of each column (headers apart).
    pub(super) widest: Vec<usize>,
}

/// One column as drawn: which, how wide, under which header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub column: usize,
    pub width: usize,
    pub header: String,
}

impl<'a> Table<'a> {
    pub fn new(columns: Vec<Column>) -> Table<'a> {
        let widest = vec![0; columns.len()];
        Table {
            columns,
            cells: Vec::new(),
            widths: Vec::new(),
            widest,
        }
    }

    /// Makes room for `rows` more rows.
    pub fn reserve(&mut self, rows: usize) {
        self.cells.reserve(rows.saturating_mul(self.columns.len()));
        self.widths.reserve(rows.saturating_mul(self.columns.len()));
    }

    /// Adds a row: one cell per column, in order (missing cells are empty,
    /// extra ones ignored). Cells are shown as given: text from outside
    /// is escaped before it gets here.
    pub fn push<I>(&mut self, row: I)
    where
        I: IntoIterator,
        I::Item: Into<Cow<'a, str>>,
    {
        let start = self.cells.len();
        self.cells
            .extend(row.into_iter().take(self.columns.len()).map(Into::into));
        self.cells
            .resize(start + self.columns.len(), Cow::Borrowed(""));
        for (widest, cell) in self.widest.iter_mut().zip(&self.cells[start..]) {
            let w = width(cell);
            self.widths.push(w);
            *widest = (*widest).max(w);
        }
    }

    /// How many rows it holds.
    pub fn len(&self) -> usize {
        self.cells
            .len()
            .checked_div(self.columns.len())
            .unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The columns drawn within `limit` columns (all of them at their
    /// widest when `None`): the fit order's turns are taken one by one
    /// until the table fits. If it still does not, the last resort:
    /// shortenable columns narrow further (to `…`), then columns go from
    /// the right, then the one left is cut to the limit. No line is ever
    /// wider than `limit`.
    pub fn fit(&self, limit: Option<usize>) -> Vec<Shown> {
        let n = self.columns.len();
        let mut shown: Vec<bool> = self.columns.iter().map(|c| !c.omitted).collect();
        let mut header: Vec<&str> = self.columns.iter().map(|c| c.header.as_str()).collect();
        // The widest cell of a column once its cells are shortened.
        let mut cap: Vec<Option<usize>> = vec![None; n];
        let mut forced: Vec<Option<usize>> = vec![None; n];
        let column_width =
            |i: usize, header: &[&str], cap: &[Option<usize>], forced: &[Option<usize>]| {
                forced[i].unwrap_or_else(|| width(header[i]).max(cap[i].unwrap_or(self.widest[i])))
            };
        let total =
            |shown: &[bool], header: &[&str], cap: &[Option<usize>], forced: &[Option<usize>]| {
                let widths: Vec<usize> = (0..n)
                    .filter(|&i| shown[i])
                    .map(|i| column_width(i, header, cap, forced))
                    .collect();
                widths.iter().sum::<usize>() + GAP * widths.len().saturating_sub(1)
            };
        if let Some(limit) = limit {
            // The fit order: (turn, column, abbreviate before drop).
            let mut turns: Vec<(u32, usize, bool)> = Vec::new();
            for (i, column) in self.columns.iter().enumerate() {
                if let Some(a) = &column.abbreviation {
                    turns.push((a.rank, i, false));
                }
                if let Some(rank) = column.drop {
                    turns.push((rank, i, true));
                }
            }
            turns.sort_unstable();
            for (_, i, drop) in turns {
                if total(&shown, &header, &cap, &forced) <= limit {
                    break;
                }
                if drop {
                    shown[i] = false;
                } else if let Some(a) = &self.columns[i].abbreviation {
                    if let Some(short) = &a.header {
                        header[i] = short;
                    }
                    if let Some((how, to)) = a.cells {
                        cap[i] = Some(self.widest_shortened(i, how, to));
                    }
                }
            }
            // The last resort, in three moves.
            for i in 0..n {
                let over = total(&shown, &header, &cap, &forced).saturating_sub(limit);
                if over == 0 {
                    break;
                }
                if shown[i] && self.columns[i].shorten().is_some() {
                    let now = column_width(i, &header, &cap, &forced);
                    forced[i] = Some(now.saturating_sub(over).max(1));
                }
            }
            while total(&shown, &header, &cap, &forced) > limit
                && shown.iter().filter(|s| **s).count() > 1
            {
                if let Some(last) = shown.iter().rposition(|s| *s) {
                    shown[last] = false;
                }
            }
            if let Some(only) = shown.iter().position(|s| *s)
                && column_width(only, &header, &cap, &forced) > limit
            {
                forced[only] = Some(limit);
            }
        }
        (0..n)
            .filter(|&i| shown[i])
            .map(|i| {
                let width = column_width(i, &header, &cap, &forced);
                Shown {
                    column: i,
                    width,
                    header: cut(header[i], width).into_owned(),
                }
            })
            .collect()
    }

    /// A row for each of `items` (the cells `row` gives it) drawn at full
    /// width (nothing cut, as into a pipe), without holding them: the
    /// items are read twice, once to measure the columns and once to draw
    /// the lines, both in parallel, a block of rows at a time. `row` gives
    /// the same cells each time.
    pub fn render_whole<'i, T, I>(
        mut self,
        items: &'i [T],
        row: impl Fn(&'i T) -> I + Sync,
    ) -> String
    where
        T: Sync,
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        const BLOCK: usize = 4096;
        let n = self.columns.len();
        let widest = |chunk: &'i [T]| {
            let mut widest = vec![0; n];
            for item in chunk {
                for (widest, cell) in widest.iter_mut().zip(row(item)) {
                    *widest = (*widest).max(width(cell.as_ref()));
                }
            }
            widest
        };
        self.widest = (items.par_chunks(BLOCK).map(widest)).reduce(
            || vec![0; n],
            |a, b| a.into_iter().zip(b).map(|(a, b)| a.max(b)).collect(),
        );
        let fit = self.fit(None);
        let line_width: usize = fit.iter().map(|s| s.width + GAP).sum::<usize>() + 1;
        let lines = |chunk: &'i [T]| {
            let mut out = String::with_capacity(chunk.len() * line_width);
            let mut cells: Vec<I::Item> = Vec::with_capacity(n);
            for item in chunk {
                cells.clear();
                cells.extend(row(item).into_iter().take(n));
                self.line(&mut out, &fit, |s| {
                    let cell = cells.get(s.column).map_or("", AsRef::as_ref);
                    (Cow::Borrowed(cell), width(cell))
                });
            }
            out
        };
        let blocks: Vec<String> = items.par_chunks(BLOCK).map(lines).collect();
        let mut out = self.header(&fit, items.len());
        for block in blocks {
            out.push_str(&block);
        }
        out
    }

    /// The header line and one line per row, fitted to `limit`.
    pub fn render(&self, limit: Option<usize>) -> String {
        let fit = self.fit(limit);
        let mut out = self.header(&fit, self.len());
        let n = self.columns.len().max(1);
        for (row, widths) in self.cells.chunks_exact(n).zip(self.widths.chunks_exact(n)) {
            self.line(&mut out, &fit, |s| {
                let (cell, w) = (&row[s.column], widths[s.column]);
                if w <= s.width {
                    // It fits: nothing to shorten or to measure again.
                    return (Cow::Borrowed(cell.as_ref()), w);
                }
                let text = self.shortened(s, cell);
                let w = width(&text);
                (text, w)
            });
        }
        out
    }

    /// The widest cell of column `i` once cells wider than `to` are
    /// shortened `how`.
    fn widest_shortened(&self, i: usize, how: Shorten, to: usize) -> usize {
        if self.widest[i] <= to {
            return self.widest[i];
        }
        let n = self.columns.len();
        self.cells
            .iter()
            .skip(i)
            .step_by(n)
            .map(|cell| {
                let w = width(cell);
                if w <= to {
                    return w;
                }
                match how {
                    Shorten::AtWords => width(&cut_words(cell, to)),
                    Shorten::Middle => width(&cut_middle(cell, to)),
                }
            })
            .max()
            .unwrap_or(0)
    }

    /// The header line of the columns `fit`, in a string with room for
    /// `rows` more lines.
    fn header(&self, fit: &[Shown], rows: usize) -> String {
        let line_width: usize = fit.iter().map(|s| s.width + GAP).sum();
        let mut out = String::with_capacity((rows + 1) * (line_width + 1));
        self.line(&mut out, fit, |s| {
            (Cow::Owned(s.header.clone()), width(&s.header))
        });
        out
    }

    /// A cell within its column's width.
    fn shortened<'c>(&self, shown: &Shown, cell: &'c str) -> Cow<'c, str> {
        match self.columns[shown.column].shorten() {
            Some(Shorten::AtWords) => cut_words(cell, shown.width),
            // A column that has no way of its own is cut only as a last
            // resort, when it is the one column left.
            Some(Shorten::Middle) => cut_middle(cell, shown.width),
            None => cut(cell, shown.width),
        }
    }

    /// One line: each shown column's cell (its text and width) padded to
    /// the column's width.
    fn line<'x>(
        &self,
        out: &mut String,
        fit: &[Shown],
        cell: impl Fn(&Shown) -> (Cow<'x, str>, usize),
    ) {
        let start = out.len();
        for (k, shown) in fit.iter().enumerate() {
            if k > 0 {
                spaces(out, GAP);
            }
            let (text, w) = cell(shown);
            let pad = shown.width.saturating_sub(w);
            match self.columns[shown.column].align {
                Align::Left => {
                    out.push_str(&text);
                    spaces(out, pad);
                }
                Align::Right => {
                    spaces(out, pad);
                    out.push_str(&text);
                }
            }
        }
        let kept = out[start..].trim_end_matches(' ').len();
        out.truncate(start + kept);
        out.push('\n');
    }
}

/// Appends `n` spaces.
fn spaces(out: &mut String, n: usize) {
    const SPACES: &str = "                                                                ";
    let mut left = n;
    while left > 0 {
        let take = left.min(SPACES.len());
        out.push_str(&SPACES[..take]);
        left -= take;
    }
}
