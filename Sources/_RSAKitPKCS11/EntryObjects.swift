// Object entry points (PKCS#11 v2.40 §5.7): searching and reading attributes. The token is
// read-only through PKCS#11 (objects are made and removed with `rsakit`): C_CreateObject and
// the other writers answer CKR_FUNCTION_NOT_SUPPORTED from the C table.
internal import CP11Kit
import RSAKit

@_cdecl("rsakit_p11_GetAttributeValue")
func rsakit_p11_GetAttributeValue(
    _ session: CK_SESSION_HANDLE, _ handle: CK_OBJECT_HANDLE, _ template: UnsafeMutablePointer<CK_ATTRIBUTE>?,
    _ count: CK_ULONG
) -> CK_RV {
    p11Entry { state in
        _ = try state.session(session)
        let object = try state.objects.object(handle, loggedIn: state.canUsePrivateObjects)
        let n = try P11Buffers.count(count, limit: 4096)
        guard n > 0 else { return CK_RV(CKR_OK) }
        guard let template else { return CK_RV(CKR_ARGUMENTS_BAD) }
        return P11Attributes.get(object, template: UnsafeMutableBufferPointer(start: template, count: n))
    }
}

@_cdecl("rsakit_p11_FindObjectsInit")
func rsakit_p11_FindObjectsInit(
    _ session: CK_SESSION_HANDLE, _ template: UnsafeMutablePointer<CK_ATTRIBUTE>?, _ count: CK_ULONG
) -> CK_RV {
    p11Entry { state in
        guard try state.session(session).search == nil else { return CK_RV(CKR_OPERATION_ACTIVE) }
        let wanted = try P11Attributes.template(template, count: count)
        try state.reloadObjects()
        let visible = state.canUsePrivateObjects
        let found = state.objects.objects
            .filter { (visible || !$0.value.isPrivate) && P11Attributes.matches($0.value, wanted) }
            .map(\.key).sorted()
        try state.withSession(session) { $0.search = found }
        return CK_RV(CKR_OK)
    }
}

@_cdecl("rsakit_p11_FindObjects")
func rsakit_p11_FindObjects(
    _ session: CK_SESSION_HANDLE, _ objects: UnsafeMutablePointer<CK_OBJECT_HANDLE>?, _ maximum: CK_ULONG,
    _ count: UnsafeMutablePointer<CK_ULONG>?
) -> CK_RV {
    p11Entry { state in
        try state.withSession(session) { current in
            guard var remaining = current.search else { return CK_RV(CKR_OPERATION_NOT_INITIALIZED) }
            guard let count else { return CK_RV(CKR_ARGUMENTS_BAD) }
            let n = min(remaining.count, Int(clamping: maximum))
            if n > 0 {
                guard let objects else { return CK_RV(CKR_ARGUMENTS_BAD) }
                for index in 0..<n { objects[index] = remaining[index] }
            }
            remaining.removeFirst(n)
            current.search = remaining
            count.pointee = CK_ULONG(n)
            return CK_RV(CKR_OK)
        }
    }
}

@_cdecl("rsakit_p11_FindObjectsFinal")
func rsakit_p11_FindObjectsFinal(_ session: CK_SESSION_HANDLE) -> CK_RV {
    p11Entry { state in
        try state.withSession(session) { current in
            guard current.search != nil else { return CK_RV(CKR_OPERATION_NOT_INITIALIZED) }
            current.search = nil
            return CK_RV(CKR_OK)
        }
    }
}
