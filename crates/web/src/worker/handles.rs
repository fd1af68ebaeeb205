//! How the worker gets the page's files: `File` handles carried beside the messages
//! ([`HandleCodec`]), read in the worker ([`read_handles`]), or a bundled sample fetched
//! ([`fetch_urls`]).

use super::*;

thread_local! {
    /// Page side: handle sets to send with every message until the worker has them.
    static OUTGOING: RefCell<HashMap<u64, Array>> = RefCell::new(HashMap::new());
    /// Worker side: handle sets received, until a load takes them.
    pub(super) static RECEIVED: RefCell<HashMap<u64, Array>> = RefCell::new(HashMap::new());
    /// The bytes a helper of a pooled load transferred beside its last message
    /// ([`post_block`]), until the bridge's callback takes them ([`take_posted_block`]).
    static POSTED: RefCell<Option<Array>> = const { RefCell::new(None) };
    /// Page's-worker side: the chunk of a pooled what-if to post beside the next messages
    /// ([`offer_chunk`]).
    static CHUNK: RefCell<Option<Uint8Array>> = const { RefCell::new(None) };
}

/// Page's-worker side: post `bytes` (a chunk of a pooled what-if's instructions) beside the
/// messages encoded until the next call, as [`post_block`]'s parts (`{m, p: [bytes]}`): one copy
/// out of wasm memory, which each helper's `postMessage` clones; `None` stops.
pub fn offer_chunk(bytes: Option<&[u8]>) {
    CHUNK.with(|c| *c.borrow_mut() = bytes.map(Uint8Array::from));
}

/// Helper side: answer bridge `id` with `parts` (a block of a pooled load) as gloo-worker's own
/// message of an empty [`Response::LoadBlock`], the parts' buffers beside it and *transferred*,
/// not copied (gloo-worker posts without a transfer list; [`HandleCodec::decode`] puts them
/// aside and the bridge's callback takes them: [`take_posted_block`]).
pub fn post_block(id: HandlerId, parts: Vec<Vec<u8>>) -> Result<(), String> {
    #[derive(Serialize)]
    enum FromWorkerMirror {
        #[allow(dead_code)]
        WorkerLoaded,
        ProcessOutput(HandlerId, Response),
    }
    let header = bincode::serialize(&FromWorkerMirror::ProcessOutput(id, Response::LoadBlock(Vec::new())))
        .map_err(|e| e.to_string())?;
    let arrays = Array::new();
    let transfer = Array::new();
    for part in parts {
        let array = Uint8Array::from(part.as_slice());
        drop(part);
        transfer.push(&array.buffer());
        arrays.push(&array);
    }
    let envelope = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&envelope, &"m".into(), &Uint8Array::from(header.as_slice()));
    let _ = js_sys::Reflect::set(&envelope, &"p".into(), &arrays);
    let global = js_sys::global();
    let post: js_sys::Function = js_sys::Reflect::get(&global, &"postMessage".into())
        .map_err(|e| js_message(&e))?
        .dyn_into()
        .map_err(|_| "postMessage is not a function".to_owned())?;
    post.call2(&global, &envelope, &transfer).map_err(|e| js_message(&e))?;
    Ok(())
}

/// Page's-worker side: the parts a helper transferred beside the message being handled
/// ([`post_block`]), copied into wasm memory; empty when there were none.
pub fn take_posted_block() -> Vec<serde_bytes::ByteBuf> {
    POSTED
        .with(|p| p.borrow_mut().take())
        .map(|arrays| {
            arrays
                .iter()
                .map(|a| serde_bytes::ByteBuf::from(Uint8Array::from(a).to_vec()))
                .collect()
        })
        .unwrap_or_default()
}

/// Page side: send `files` (`File` or `Blob` objects) to workers under `key` with the next
/// messages. gloo-worker encodes a message when it is posted, which for a new worker is only
/// once the worker has started, so the set stays until [`release_handles`].
pub fn offer_handles(key: u64, files: Array) {
    OUTGOING.with(|o| o.borrow_mut().insert(key, files));
}

/// Page side: stop sending the handle set `key` (its load or comparison has answered).
pub fn release_handles(key: u64) {
    OUTGOING.with(|o| o.borrow_mut().remove(&key));
}

/// The worker channel's codec: gloo-worker's bincode for the message, plus the offered `File`
/// handles as structured-clone values beside it (`{m: bytes, f: [[key, files], …]}`). A `File`
/// crosses by reference: its bytes stay on disk until the worker reads them.
pub struct HandleCodec;

impl Codec for HandleCodec {
    fn encode<I: Serialize>(input: I) -> JsValue {
        let buf = bincode::serialize(&input).expect("worker messages are plain serde structs");
        let bytes: JsValue = Uint8Array::from(buf.as_slice()).into();
        let sets = OUTGOING.with(|o| {
            o.borrow()
                .iter()
                .map(|(k, v)| Array::of2(&JsValue::from_f64(*k as f64), v))
                .collect::<Array>()
        });
        let chunk = CHUNK.with(|c| c.borrow().clone());
        if sets.length() == 0 && chunk.is_none() {
            return bytes;
        }
        let envelope = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&envelope, &"m".into(), &bytes);
        if sets.length() > 0 {
            let _ = js_sys::Reflect::set(&envelope, &"f".into(), &sets);
        }
        if let Some(chunk) = chunk {
            let _ = js_sys::Reflect::set(&envelope, &"p".into(), &Array::of1(&chunk));
        }
        envelope.into()
    }

    fn decode<O: for<'de> Deserialize<'de>>(input: JsValue) -> O {
        let bytes = if input.is_instance_of::<Uint8Array>() {
            input
        } else {
            // A helper's transferred block ([`post_block`]) comes without handle sets.
            if let Some(sets) = js_sys::Reflect::get(&input, &"f".into()).ok().filter(|s| s.is_object()) {
                RECEIVED.with(|r| {
                    let mut r = r.borrow_mut();
                    for set in Array::from(&sets).iter() {
                        let set = Array::from(&set);
                        if let Some(key) = set.get(0).as_f64() {
                            r.entry(key as u64).or_insert_with(|| Array::from(&set.get(1)));
                        }
                    }
                });
            }
            if let Ok(parts) = js_sys::Reflect::get(&input, &"p".into()) {
                if parts.is_instance_of::<Array>() {
                    POSTED.with(|p| *p.borrow_mut() = Some(Array::from(&parts)));
                }
            }
            js_sys::Reflect::get(&input, &"m".into()).unwrap_or(JsValue::UNDEFINED)
        };
        let data = Uint8Array::from(bytes).to_vec();
        bincode::deserialize(&data).expect("worker messages are plain serde structs")
    }
}

pub(super) fn js_message(e: &JsValue) -> String {
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        return String::from(err.message());
    }
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}

/// Read the handle set `key`, reporting `reading NAME in the worker` for each file in turn.
///
/// Plain files are read whole, end to end as one `Blob` several slices at once ([`read_blobs`]:
/// one copy of each byte into wasm memory, a few reads for thousands of small rank files). Files named as archives or compressed files are read with
/// `FileReaderSync`, slice by slice on demand, and unpacked as they stream in ([`Unpacker`]), so
/// only their members are held, never the compressed bytes whole.
///
/// Refused as too large: inputs over `limit` (at most [`MAX_INPUT_BYTES`]) as given, or once
/// unpacked.
pub(super) async fn read_handles(
    label: &str,
    key: u64,
    names: &[String],
    limit: u64,
    report: &mut dyn FnMut(ProgressReport) -> bool,
) -> Result<Vec<WireFile>, Failure> {
    let limit = limit.min(MAX_INPUT_BYTES);
    let fail = |message: String| Failure {
        message,
        cancelled: false,
    };
    let handles = RECEIVED
        .with(|r| r.borrow_mut().remove(&key))
        .ok_or_else(|| fail(format!("{label}: the files did not reach the worker")))?;
    if handles.length() as usize != names.len() {
        return Err(fail(format!(
            "{label}: {} names for {} files",
            names.len(),
            handles.length()
        )));
    }
    let blobs: Vec<web_sys::Blob> = handles.iter().map(|h| h.unchecked_into()).collect();
    let sizes: Vec<u64> = blobs.iter().map(|b| b.size() as u64).collect();
    let total: u64 = sizes.iter().sum();
    if let Some(message) = crate::session::too_large(label, total, limit, "") {
        return Err(fail(message));
    }
    let stage = |name: &str| format!("reading {name} in the worker");
    // Where each file starts in the byte count over all of them, in the order given.
    let offsets: Vec<u64> = sizes
        .iter()
        .scan(0, |at, &size| {
            let start = *at;
            *at += size;
            Some(start)
        })
        .collect();
    let plain: Vec<usize> = (0..names.len()).filter(|&i| !streamed_by_name(&names[i])).collect();
    let plain_names: Vec<String> = plain.iter().map(|&i| names[i].clone()).collect();
    let plain_blobs: Vec<web_sys::Blob> = plain.iter().map(|&i| blobs[i].clone()).collect();
    let mut current: Option<usize> = None;
    let mut plain_bytes = {
        let mut progress = |k: usize, _: u64| {
            let i = plain[k];
            if current != Some(i) {
                current = Some(i);
                if !report(ProgressReport {
                    stage: stage(&names[i]),
                    bytes_done: offsets[i],
                    bytes_total: total,
                }) {
                    return false;
                }
            }
            true
        };
        read_blobs(&plain_names, &plain_blobs, &mut progress)
            .await
            .map_err(|e| Failure {
                message: e.to_string(),
                cancelled: e.cancelled,
            })?
            .into_iter()
    };
    // Archives stop unpacking at the input limit, rather than holding up to 2 GiB before refusing.
    let mut unpacker = Unpacker::with_limit(limit);
    let mut reader: Option<web_sys::FileReaderSync> = None;
    for (i, (name, blob)) in names.iter().zip(blobs).enumerate() {
        let added = if streamed_by_name(name) {
            let reader = match &reader {
                Some(r) => r.clone(),
                None => {
                    let r = web_sys::FileReaderSync::new().map_err(|e| fail(format!("{label}: {}", js_message(&e))))?;
                    reader.insert(r).clone()
                }
            };
            let before = offsets[i];
            let stage = stage(name);
            let mut progress = |at: u64| {
                report(ProgressReport {
                    stage: stage.clone(),
                    bytes_done: before + at,
                    bytes_total: total,
                })
            };
            let mut source = blob_reader(name, blob, reader, &mut progress);
            unpacker.add_reader(name, sizes[i], &mut source)
        } else {
            let bytes = plain_bytes.next().expect("one read per plain file");
            unpacker.add_file(InputFile::new(name.clone(), bytes))
        };
        if let Err(e) = added {
            if unpacker.limit_reached() {
                let over = limit + 1;
                let message = crate::session::too_large(label, over, limit, " or more once unpacked");
                return Err(fail(message.unwrap_or_else(|| e.to_string())));
            }
            return Err(Failure {
                message: e.to_string(),
                cancelled: e.cancelled,
            });
        }
    }
    let files = unpacker.finish();
    let unpacked: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
    if unpacked > total {
        if let Some(message) = crate::session::too_large(label, unpacked, limit, " once unpacked") {
            return Err(fail(message));
        }
    }
    Ok(files
        .into_iter()
        .map(|f| WireFile {
            name: f.name,
            bytes: f.bytes,
        })
        .collect())
}

/// Fetch sample files (the worker's `fetch`, so the bytes never pass the page).
pub(super) async fn fetch_urls(urls: Vec<(String, String)>) -> Result<Vec<WireFile>, String> {
    let scope: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    let mut files = Vec::with_capacity(urls.len());
    let mut total = 0u64;
    for (name, url) in urls {
        let response = wasm_bindgen_futures::JsFuture::from(scope.fetch_with_str(&url))
            .await
            .map_err(|e| format!("{url}: cannot fetch: {}", js_message(&e)))?;
        let response: web_sys::Response = response.unchecked_into();
        if !response.ok() {
            return Err(format!("{url}: the server answered {}", response.status()));
        }
        let buffer = wasm_bindgen_futures::JsFuture::from(response.array_buffer().map_err(|e| js_message(&e))?)
            .await
            .map_err(|e| format!("{url}: cannot read the answer: {}", js_message(&e)))?;
        let array = Uint8Array::new(&buffer);
        total += array.length() as u64;
        if let Some(message) = too_large(&name, total) {
            return Err(message);
        }
        files.push(WireFile {
            name,
            bytes: array.to_vec(),
        });
    }
    Ok(files)
}
