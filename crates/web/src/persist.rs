//! What survives a reload: the last trace the user loaded from files (its `File` objects), the
//! runs compared with a trace (their properties), the analysis settings and the topology library,
//! kept in the browser's IndexedDB through `rexie`. Nothing is sent anywhere; "Forget stored
//! traces" deletes it all.
//!
//! The files are stored as `Blob`s: IndexedDB copies their content into the browser's own
//! storage, so the page never reads them into memory to store them, and on reload the worker
//! reads them back in slices like any picked file.
//!
//! Compared runs are kept as the compact properties the comparison needs (`RunProperties`: a few
//! numbers per rank and the communication graph's edges, kilobytes where their traces were
//! megabytes): on reload the worker recompares from them without reading those traces again, and
//! the answer is the one shown before. The trace's input and the compared runs' properties share
//! one cap, [`MAX_STORED_BYTES`].

use js_sys::{Array, Object, Reflect};
use rexie::{ObjectStore, Rexie, TransactionMode};
use wasm_bindgen::JsValue;

/// Most bytes stored for a reload (512 MiB), the trace's input and the compared runs' properties
/// together: browsers grant a site a share of the disk, often a few GB, and a trace bigger than
/// this is better picked again than duplicated.
pub const MAX_STORED_BYTES: u64 = 512 << 20;

const DATABASE: &str = "tracelogic";
const STORE: &str = "state";
/// Key of the stored trace.
const TRACE: &str = "trace";
/// Key of the stored compared runs.
const COMPARED: &str = "compared";
/// Key of the stored settings (a [`crate::route::Route`] fragment).
const SETTINGS: &str = "settings";

/// A trace kept for the next visit.
#[derive(Debug, Clone)]
pub struct StoredTrace {
    /// What the user loaded.
    pub label: String,
    /// Relative names, in the order of `files`.
    pub names: Vec<String>,
    /// The `Blob`s.
    pub files: Array,
    /// Their total size.
    pub bytes: u64,
}

fn err(what: &str, e: impl std::fmt::Display) -> String {
    format!("browser storage: cannot {what}: {e}")
}

async fn open() -> Result<Rexie, String> {
    Rexie::builder(DATABASE)
        .version(1)
        .add_object_store(ObjectStore::new(STORE))
        .build()
        .await
        .map_err(|e| err("open the database", e))
}

async fn put(key: &str, value: &JsValue) -> Result<(), String> {
    let db = open().await?;
    let tx = db
        .transaction(&[STORE], TransactionMode::ReadWrite)
        .map_err(|e| err("write", e))?;
    let store = tx.store(STORE).map_err(|e| err("write", e))?;
    store
        .put(value, Some(&JsValue::from_str(key)))
        .await
        .map_err(|e| err("write", e))?;
    tx.done().await.map_err(|e| err("write", e))?;
    db.close();
    Ok(())
}

async fn get(key: &str) -> Result<Option<JsValue>, String> {
    let db = open().await?;
    let tx = db
        .transaction(&[STORE], TransactionMode::ReadOnly)
        .map_err(|e| err("read", e))?;
    let store = tx.store(STORE).map_err(|e| err("read", e))?;
    let value = store.get(JsValue::from_str(key)).await.map_err(|e| err("read", e))?;
    tx.done().await.map_err(|e| err("read", e))?;
    db.close();
    Ok(value.filter(|v| !v.is_undefined() && !v.is_null()))
}

/// Keep `files` (`File` or `Blob` objects named by `names`) as the trace to reopen. Returns
/// false, storing nothing and dropping any older trace, when they exceed [`MAX_STORED_BYTES`].
/// The trace comes first: kept compared runs that no longer fit beside it are dropped.
pub async fn save_trace(label: &str, names: &[String], files: &Array, bytes: u64) -> Result<bool, String> {
    if bytes > MAX_STORED_BYTES {
        forget_trace().await?;
        return Ok(false);
    }
    if let Some(compared) = load_compared().await? {
        if !fits(bytes, compared.bytes) {
            delete(COMPARED).await?;
        }
    }
    let record = Object::new();
    let set = |k: &str, v: &JsValue| Reflect::set(&record, &JsValue::from_str(k), v).map(|_| ());
    let names_js: Array = names.iter().map(|n| JsValue::from_str(n)).collect();
    set("label", &JsValue::from_str(label))
        .and_then(|_| set("names", &names_js))
        .and_then(|_| set("files", files))
        .and_then(|_| set("bytes", &JsValue::from_f64(bytes as f64)))
        .map_err(|_| err("write", "record"))?;
    put(TRACE, &record).await?;
    Ok(true)
}

/// The stored trace, if any (a record that does not read back is treated as none).
pub async fn load_trace() -> Result<Option<StoredTrace>, String> {
    let Some(record) = get(TRACE).await? else {
        return Ok(None);
    };
    let field = |k: &str| Reflect::get(&record, &JsValue::from_str(k)).ok();
    let label = field("label").and_then(|v| v.as_string());
    let names = field("names").filter(|v| v.is_array()).map(|v| Array::from(&v));
    let files = field("files").filter(|v| v.is_array()).map(|v| Array::from(&v));
    let bytes = field("bytes").and_then(|v| v.as_f64());
    match (label, names, files, bytes) {
        (Some(label), Some(names), Some(files), Some(bytes)) if names.length() == files.length() => {
            Ok(Some(StoredTrace {
                label,
                names: names.iter().filter_map(|n| n.as_string()).collect(),
                files,
                bytes: bytes as u64,
            }))
        }
        _ => Ok(None),
    }
}

/// Drop the stored trace only.
pub async fn forget_trace() -> Result<(), String> {
    delete(TRACE).await
}

async fn delete(key: &str) -> Result<(), String> {
    let db = open().await?;
    let tx = db
        .transaction(&[STORE], TransactionMode::ReadWrite)
        .map_err(|e| err("delete", e))?;
    let store = tx.store(STORE).map_err(|e| err("delete", e))?;
    store
        .delete(JsValue::from_str(key))
        .await
        .map_err(|e| err("delete", e))?;
    tx.done().await.map_err(|e| err("delete", e))?;
    db.close();
    Ok(())
}

/// Whether a trace of `trace_bytes` input and compared runs of `compared_bytes` fit the shared
/// cap [`MAX_STORED_BYTES`] together.
pub fn fits(trace_bytes: u64, compared_bytes: u64) -> bool {
    trace_bytes.saturating_add(compared_bytes) <= MAX_STORED_BYTES
}

/// Runs compared with a trace, kept for the next visit.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredComparison {
    /// The trace they were compared with (see `views::compare::owner_key`): they come back only
    /// with that trace.
    pub owner: String,
    /// The runs' properties as JSON (a list of `RunProperties`, in the order added).
    pub runs: String,
    /// Size of `runs` in bytes, counted against [`MAX_STORED_BYTES`].
    pub bytes: u64,
}

/// Keep `runs` (JSON of the compared runs' properties) as the comparison of the trace `owner`,
/// replacing any kept before. Returns false, storing nothing and dropping the older ones, when
/// they do not fit beside the stored trace under [`MAX_STORED_BYTES`].
pub async fn save_compared(owner: &str, runs: &str) -> Result<bool, String> {
    let bytes = runs.len() as u64;
    let trace_bytes = match get(TRACE).await? {
        Some(record) => Reflect::get(&record, &JsValue::from_str("bytes"))
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0) as u64,
        None => 0,
    };
    if !fits(trace_bytes, bytes) {
        delete(COMPARED).await?;
        return Ok(false);
    }
    let record = Object::new();
    let set = |k: &str, v: &JsValue| Reflect::set(&record, &JsValue::from_str(k), v).map(|_| ());
    set("owner", &JsValue::from_str(owner))
        .and_then(|_| set("runs", &JsValue::from_str(runs)))
        .and_then(|_| set("bytes", &JsValue::from_f64(bytes as f64)))
        .map_err(|_| err("write", "record"))?;
    put(COMPARED, &record).await?;
    Ok(true)
}

/// The kept compared runs, if any (a record that does not read back is treated as none).
pub async fn load_compared() -> Result<Option<StoredComparison>, String> {
    let Some(record) = get(COMPARED).await? else {
        return Ok(None);
    };
    let field = |k: &str| Reflect::get(&record, &JsValue::from_str(k)).ok();
    let owner = field("owner").and_then(|v| v.as_string());
    let runs = field("runs").and_then(|v| v.as_string());
    Ok(owner.zip(runs).map(|(owner, runs)| StoredComparison {
        owner,
        bytes: runs.len() as u64,
        runs,
    }))
}

/// Drop the kept compared runs only.
pub async fn forget_compared() -> Result<(), String> {
    delete(COMPARED).await
}

/// Drop everything stored: the trace, the compared runs, the settings and the library.
pub async fn forget_all() -> Result<(), String> {
    let db = open().await?;
    let tx = db
        .transaction(&[STORE], TransactionMode::ReadWrite)
        .map_err(|e| err("delete", e))?;
    let store = tx.store(STORE).map_err(|e| err("delete", e))?;
    store.clear().await.map_err(|e| err("delete", e))?;
    tx.done().await.map_err(|e| err("delete", e))?;
    db.close();
    Ok(())
}

/// Keep the analysis settings (a route fragment without the sample).
pub async fn save_settings(fragment: &str) -> Result<(), String> {
    put(SETTINGS, &JsValue::from_str(fragment)).await
}

/// The stored settings fragment, if any.
pub async fn load_settings() -> Result<Option<String>, String> {
    Ok(get(SETTINGS).await?.and_then(|v| v.as_string()))
}

/// Keep any other value of the page's state under `key` (e.g. a reference library), as a
/// JSON text; [`forget_all`] removes it too.
pub async fn save_value(key: &str, json: &str) -> Result<(), String> {
    put(key, &JsValue::from_str(json)).await
}

/// A value kept with [`save_value`].
pub async fn load_value(key: &str) -> Result<Option<String>, String> {
    Ok(get(key).await?.and_then(|v| v.as_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trace_and_the_compared_runs_share_one_cap() {
        assert!(fits(MAX_STORED_BYTES, 0));
        assert!(fits(MAX_STORED_BYTES - 10, 10));
        assert!(!fits(MAX_STORED_BYTES - 10, 11));
        assert!(!fits(0, MAX_STORED_BYTES + 1));
        assert!(!fits(u64::MAX, 1), "no overflow on absurd sizes");
    }
}
