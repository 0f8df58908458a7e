//! A column: its header, alignment, and what it gives up, in which order,
//! when the table is too wide.

/// Which side of its column a cell keeps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    /// Numbers, so their digits line up.
    Right,
}

/// How a column's cells may be shortened, always ending in `…`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shorten {
    /// After the last whole word that fits (prose, lists of names).
    AtWords,
    /// In the middle, head and tail kept: a job id, whose tail
    /// (`@provider#k`) tells instances apart.
    Middle,
}

/// What a column does at its turn in the fit order: a shorter header, and
/// cells shortened to at most `width` columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Abbreviation {
    pub rank: u32,
    pub header: Option<String>,
    pub cells: Option<(Shorten, usize)>,
}

/// One column of a [`super::Table`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub(super) header: String,
    pub(super) align: Align,
    /// Its turn to be dropped; never when `None`.
    pub(super) drop: Option<u32>,
    pub(super) abbreviation: Option<Abbreviation>,
    pub(super) omitted: bool,
}

impl Column {
    /// A left-aligned column that is never dropped or shortened.
    pub fn new(header: &str) -> Column {
        Column {
            header: header.to_string(),
            align: Align::Left,
            drop: None,
            abbreviation: None,
            omitted: false,
        }
    }

    pub fn right(mut self) -> Column {
        self.align = Align::Right;
        self
    }

    /// Dropped at turn `rank` of the fit order (turns are taken lowest
    /// first, the columns' abbreviations and drops together; a tie goes to
    /// the column further left).
    pub fn drop_at(mut self, rank: u32) -> Column {
        self.drop = Some(rank);
        self
    }

    /// At turn `rank`, the header becomes `header`.
    pub fn short_header(mut self, rank: u32, header: &str) -> Column {
        let abbreviation = self.abbreviation.get_or_insert(Abbreviation {
            rank,
            header: None,
            cells: None,
        });
        abbreviation.rank = rank;
        abbreviation.header = Some(header.to_string());
        self
    }

    /// At turn `rank`, cells wider than `width` are shortened `how`.
    pub fn shorten_at(mut self, rank: u32, how: Shorten, width: usize) -> Column {
        let abbreviation = self.abbreviation.get_or_insert(Abbreviation {
            rank,
            header: None,
            cells: None,
        });
        abbreviation.rank = rank;
        abbreviation.cells = Some((how, width));
        self
    }

    /// Left out of the table whatever the width (its cells are still
    /// given, so rows keep one shape).
    pub fn omitted(mut self, omitted: bool) -> Column {
        self.omitted = omitted;
        self
    }

    pub fn header(&self) -> &str {
        &self.header
    }

    pub fn align(&self) -> Align {
        self.align
    }

    /// How its cells shorten when the last resort needs them to.
    pub(super) fn shorten(&self) -> Option<Shorten> {
        self.abbreviation
            .as_ref()
            .and_then(|a| a.cells)
            .map(|(how, _)| how)
    }
}
