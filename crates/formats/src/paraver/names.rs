//! The names a Paraver trace's companions give: the `.pcf`'s event types, their values and
//! gradients (which types are MPI calls, collective attributes, callers, counters, user
//! functions: [`classify_types`]) and the `.row`'s thread labels.

use super::*;

/// One event type of the `.pcf`.
#[derive(Debug, Clone)]
pub(super) struct EventType {
    pub(super) label: String,
    /// Gradient colour index (first column), named in `GRADIENT_NAMES`.
    pub(super) gradient: u32,
    /// Index into [`Pcf::value_sets`] of the block's `VALUES`.
    pub(super) values: Option<usize>,
}

/// The parts of a `.pcf` the reader needs.
#[derive(Debug, Default)]
pub(super) struct Pcf {
    pub(super) types: HashMap<u64, EventType>,
    pub(super) value_sets: Vec<HashMap<u64, String>>,
    pub(super) gradient_names: HashMap<u32, String>,
    pub(super) states: HashMap<u64, String>,
}

pub(super) fn parse_pcf(file: &InputFile) -> Result<Pcf, FormatError> {
    let text = String::from_utf8_lossy(&file.bytes);
    let mut pcf = Pcf::default();
    #[derive(PartialEq)]
    enum Section {
        Other,
        States,
        Gradients,
        Types,
        Values,
    }
    let mut section = Section::Other;
    let mut block_types: Vec<u64> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i as u64 + 1;
        let line = raw.trim();
        if line.is_empty() {
            if section == Section::Types || section == Section::Values {
                block_types.clear();
            }
            if section != Section::Other {
                section = Section::Other;
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let first = line.split_whitespace().next().unwrap_or("");
        if first.bytes().all(|c| c.is_ascii_uppercase() || c == b'_') && first.len() > 1 {
            match first {
                "STATES" => section = Section::States,
                "GRADIENT_NAMES" => section = Section::Gradients,
                "EVENT_TYPE" => {
                    section = Section::Types;
                    block_types.clear();
                }
                "VALUES" => {
                    if section != Section::Types {
                        return Err(FormatError::at_line(
                            &file.name,
                            line_no,
                            "VALUES outside an EVENT_TYPE block",
                        ));
                    }
                    section = Section::Values;
                    pcf.value_sets.push(HashMap::new());
                    let set = pcf.value_sets.len() - 1;
                    for t in &block_types {
                        if let Some(et) = pcf.types.get_mut(t) {
                            et.values = Some(set);
                        }
                    }
                }
                _ if section == Section::Values || section == Section::Types => {
                    // PRECISION and similar options inside a block.
                }
                _ => section = Section::Other,
            }
            continue;
        }
        let mut words = line.splitn(2, char::is_whitespace);
        let a = words.next().unwrap_or("");
        let rest = words.next().unwrap_or("").trim();
        match section {
            Section::Other => {}
            Section::States => {
                if let Ok(id) = a.parse::<u64>() {
                    pcf.states.insert(id, rest.to_owned());
                }
            }
            Section::Gradients => {
                if let Ok(id) = a.parse::<u32>() {
                    pcf.gradient_names.insert(id, rest.to_owned());
                }
            }
            Section::Types => {
                let mut w = rest.splitn(2, char::is_whitespace);
                let ty = w.next().unwrap_or("");
                let label = w.next().unwrap_or("").trim();
                let (Ok(gradient), Ok(ty)) = (a.parse::<u32>(), ty.parse::<u64>()) else {
                    return Err(FormatError::at_line(
                        &file.name,
                        line_no,
                        format!("expected `<colour> <event type> <label>` in an EVENT_TYPE block, found `{line}`"),
                    ));
                };
                block_types.push(ty);
                pcf.types.insert(
                    ty,
                    EventType {
                        label: label.to_owned(),
                        gradient,
                        values: None,
                    },
                );
            }
            Section::Values => {
                let Ok(v) = a.parse::<u64>() else {
                    return Err(FormatError::at_line(
                        &file.name,
                        line_no,
                        format!("expected `<value> <label>` after VALUES, found `{line}`"),
                    ));
                };
                let set = pcf.value_sets.len() - 1;
                pcf.value_sets[set].insert(v, rest.to_owned());
            }
        }
    }
    Ok(pcf)
}

/// What the reader does with an event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// Enter (value ≠ 0) or leave (0) an MPI call named by the value.
    MpiCall,
    CollSendSize,
    CollRecvSize,
    CollRoot,
    CollComm,
    /// Caller at this level (1 = the innermost).
    Caller(u32),
    /// Hardware counter; index into [`Roles::metric_names`].
    Counter(usize),
    /// User function enter (value ≠ 0) / leave (0).
    Region,
    Ignore,
}

pub(super) struct Roles {
    pub(super) by_type: HashMap<u64, Role>,
    /// Event type of each caller level.
    pub(super) caller_types: HashMap<u32, u64>,
    pub(super) metric_names: Vec<String>,
}

pub(super) fn classify_types(pcf: &Pcf) -> Roles {
    let mut by_type = HashMap::new();
    let mut metric_names = Vec::new();
    let mut types: Vec<(&u64, &EventType)> = pcf.types.iter().collect();
    types.sort_by_key(|(t, _)| **t);
    for (&ty, et) in types {
        let label = et.label.as_str();
        let lower = label.to_ascii_lowercase();
        let values = et.values.map(|i| &pcf.value_sets[i]);
        let role = if values.is_some_and(|v| v.values().any(|l| l.starts_with("MPI_") || l.starts_with("PMPI_"))) {
            Role::MpiCall
        } else if lower.contains("global op") && lower.contains("send size") {
            Role::CollSendSize
        } else if lower.contains("global op") && lower.contains("recv size") {
            Role::CollRecvSize
        } else if lower.contains("global op") && lower.starts_with("root") {
            Role::CollRoot
        } else if lower.contains("global op") && lower.starts_with("communicator") {
            Role::CollComm
        } else if let Some(level) = lower.strip_prefix("caller at level ") {
            level.trim().parse().map(Role::Caller).unwrap_or(Role::Ignore)
        } else if let Some(name) = counter_name(label, pcf.gradient_names.get(&et.gradient)) {
            metric_names.push(name);
            Role::Counter(metric_names.len() - 1)
        } else if values.is_some_and(|v| {
            v.get(&0).is_some_and(|l| l.eq_ignore_ascii_case("end"))
                && v.iter().any(|(&k, l)| k != 0 && !l.eq_ignore_ascii_case("begin"))
        }) && !lower.contains("sampled")
            && !lower.starts_with("caller")
        {
            Role::Region
        } else {
            Role::Ignore
        };
        by_type.insert(ty, role);
    }
    let caller_types = by_type
        .iter()
        .filter_map(|(&ty, r)| match r {
            Role::Caller(l) => Some((*l, ty)),
            _ => None,
        })
        .collect();
    Roles {
        by_type,
        caller_types,
        metric_names,
    }
}

/// The counter name of a hardware-counter event type, if it is one.
pub(super) fn counter_name(label: &str, gradient: Option<&String>) -> Option<String> {
    let name = label.split(" (").next().unwrap_or(label).trim();
    if name.starts_with("PAPI_") {
        return Some(name.to_owned());
    }
    let hw = gradient.is_some_and(|g| g.to_ascii_lowercase().contains("hardware counter"));
    if hw && label.contains(" ([") && !name.contains(' ') {
        return Some(name.to_owned());
    }
    None
}

/// Thread labels of the `.row` (`THREAD 1.2.1`...), in global thread order.
pub(super) fn parse_row_threads(file: &InputFile) -> Result<Vec<String>, FormatError> {
    let text = String::from_utf8_lossy(&file.bytes);
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    let mut threads = Vec::new();
    while i < lines.len() {
        let line = lines[i].trim();
        i += 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let w: Vec<&str> = line.split_whitespace().collect();
        let (level, n) = match w.as_slice() {
            ["LEVEL", level, "SIZE", n] => match n.parse::<usize>() {
                Ok(n) => (*level, n),
                Err(_) => {
                    return Err(FormatError::at_line(
                        &file.name,
                        i as u64,
                        format!("bad SIZE in `{line}`"),
                    ))
                }
            },
            _ => {
                return Err(FormatError::at_line(
                    &file.name,
                    i as u64,
                    format!("expected `LEVEL <name> SIZE <n>`, found `{line}`"),
                ))
            }
        };
        if n > lines.len() - i {
            return Err(FormatError::at_line(
                &file.name,
                i as u64,
                format!(
                    "LEVEL {level} announces {n} labels but only {} lines follow",
                    lines.len() - i
                ),
            ));
        }
        if level == "THREAD" {
            threads = lines[i..i + n].iter().map(|l| l.trim().to_owned()).collect();
        }
        i += n;
    }
    Ok(threads)
}
